//! The negative steps of the conformance scenario: requests the provider must refuse. Each
//! passes when the refusal comes with the expected status; none is counted as a success.

use super::step::StepError;
use chrono::Utc;
use serde_json::{Value, json};

use super::caller::Expect;
use super::step::StepContext;
use super::steps::quote_call;
use crate::models::{Envelope, Operation};
use crate::record::Check;
use crate::record::QuoteRef;
use crate::scenario::{ErrorCase, ExpectedStatus};

/// The request a refusal case sends: its operation, template context and body.
type RefusedRequest = (Operation, Value, Option<Value>);

pub(super) async fn expect_error(
    cx: &mut StepContext<'_>,
    case: ErrorCase,
    status: ExpectedStatus,
) -> Result<(), StepError> {
    let step = cx.step_name.clone();
    let (operation, context, body) = refused_request(cx, case, &step).await?;
    let expect = Expect::Refusal(status.clone());
    let mut spec = cx.spec(operation, &step, &context, body, expect)?;
    if case == ErrorCase::BadToken {
        spec.wrong_token = Some(format!("invalid-{}", cx.booking().number));
    }
    let mut pending = cx.send(spec).await;
    if let Some(response) = &pending.attempt.response
        && !status.matches(response.status)
    {
        pending.checks.push(Check::fail(
            "refusal",
            format!(
                "the provider accepted or answered differently: {}",
                super::steps::excerpt(&response.body.to_value())
            ),
        ));
    }
    cx.conclude(pending)
}

async fn refused_request(
    cx: &mut StepContext<'_>,
    case: ErrorCase,
    step: &str,
) -> Result<RefusedRequest, StepError> {
    let booking = cx.booking().clone();
    Ok(match case {
        ErrorCase::BadToken | ErrorCase::PastDate => {
            let data = if case == ErrorCase::PastDate {
                booking.with_past_departure(Utc::now())
            } else {
                booking
            };
            let body = json!(Envelope {
                data: data.quote_request(0, false)
            });
            (Operation::Quote, cx.context(None, None, None), Some(body))
        }
        ErrorCase::MissingField
        | ErrorCase::ReusedBookingNumber
        | ErrorCase::ReusedQuoteReference => {
            let body = refused_subscription(cx, case, step).await?;
            let quote = first_quote(cx);
            let context = cx.context(Some(&quote), None, None);
            (Operation::Subscription, context, Some(body))
        }
        ErrorCase::UnknownContract => {
            // The context a claim gets everywhere (the rehearsal's): dates and product type.
            let contract = format!("ct-unknown-{}", booking.number);
            let now = Utc::now();
            let dates = (
                now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                now.format("%Y-%m-%d").to_string(),
            );
            let mut context = cx.context(None, Some(&contract), Some(dates));
            context["product_type"] = json!(crate::models::ProductType::Withdrawal);
            (Operation::Claim, context, Some(json!({ "data": {} })))
        }
        ErrorCase::UnknownBooking => {
            let quote = first_quote(cx);
            let mut context = cx.context(Some(&quote), None, None);
            context["booking"]["number"] = json!(format!("{}-U", booking.number));
            let mut ids: Vec<String> = cx.state.quotes.iter().map(|q| q.id.clone()).collect();
            if ids.is_empty() {
                ids.push("qt-unknown".to_string());
            }
            let body = json!(Envelope {
                data: booking.update_request(&ids)
            });
            (Operation::Update, context, Some(body))
        }
    })
}

/// Subscriptions the provider must refuse: one without the client's email, one reusing this
/// flow's booking number, one reusing quote references already subscribed.
async fn refused_subscription(
    cx: &mut StepContext<'_>,
    case: ErrorCase,
    step: &str,
) -> Result<Value, StepError> {
    let booking = cx.booking().clone();
    let references = if case == ErrorCase::ReusedQuoteReference {
        cx.state
            .quotes
            .iter()
            .map(|q| q.reference.clone())
            .collect()
    } else {
        vec![fresh_quote(cx, step).await?.0]
    };
    let mut body = json!(Envelope {
        data: booking.subscription_request(&references)
    });
    match case {
        ErrorCase::MissingField => {
            body["data"]["bookingNumber"] = json!(format!("{}-M", booking.number));
            if let Some(client) = body["data"]["client"].as_object_mut() {
                client.remove("email");
            }
        }
        ErrorCase::ReusedQuoteReference => {
            body["data"]["bookingNumber"] = json!(format!("{}-R", booking.number));
        }
        _ => {}
    }
    Ok(body)
}

/// A real quote, needed by refusals that must not fail on a missing quote first.
async fn fresh_quote(cx: &mut StepContext<'_>, step: &str) -> Result<(String, String), StepError> {
    let body = json!(Envelope {
        data: cx.booking().quote_request(0, false)
    });
    let (quote, _) = quote_call(cx, step, body, None, None).await?;
    Ok((quote.reference, quote.id))
}

/// The flow's first quote, else one no server made: refusal calls whose templates name a
/// quote get the context the rehearsal before the run assumed.
fn first_quote(cx: &StepContext<'_>) -> QuoteRef {
    cx.state
        .quotes
        .first()
        .cloned()
        .unwrap_or_else(unknown_quote)
}

fn unknown_quote() -> QuoteRef {
    QuoteRef {
        id: "qt-unknown".into(),
        reference: "QR-UNKNOWN".into(),
        ..QuoteRef::default()
    }
}

//! The negative steps of the conformance scenario: requests the provider must refuse. Each
//! passes when the refusal comes with the expected status; none is counted as a success.

use chrono::Utc;
use serde_json::json;

use super::call::Expect;
use super::flow::FlowRunner;
use crate::models::{Envelope, Operation};
use crate::record::Check;
use crate::scenario::{ErrorCase, ExpectedStatus, Step};

impl FlowRunner<'_> {
    pub async fn expect_error(
        &mut self,
        case: ErrorCase,
        status: ExpectedStatus,
    ) -> Result<(), String> {
        let step = Step::ExpectError {
            case,
            status: status.clone(),
        }
        .name();
        let booking = self.booking().clone();
        let refusal = || Expect::Refusal(status.clone());
        let (operation, context, body) = match case {
            ErrorCase::BadToken | ErrorCase::PastDate => {
                let data = if case == ErrorCase::PastDate {
                    booking.with_past_departure(Utc::now())
                } else {
                    booking.clone()
                };
                (
                    Operation::Quote,
                    self.context(None, None, None),
                    Some(json!(Envelope {
                        data: data.quote_request(0, false)
                    })),
                )
            }
            ErrorCase::MissingField => {
                let (reference, _) = self.fresh_quote(&step).await?;
                let mut body = json!(Envelope {
                    data: booking.subscription_request(&[reference])
                });
                body["data"]["bookingNumber"] = json!(format!("{}-M", booking.number));
                if let Some(client) = body["data"]["client"].as_object_mut() {
                    client.remove("email");
                }
                (
                    Operation::Subscription,
                    self.context(None, None, None),
                    Some(body),
                )
            }
            ErrorCase::ReusedBookingNumber => {
                let (reference, _) = self.fresh_quote(&step).await?;
                (
                    Operation::Subscription,
                    self.context(None, None, None),
                    Some(json!(Envelope {
                        data: booking.subscription_request(&[reference])
                    })),
                )
            }
            ErrorCase::ReusedQuoteReference => {
                let references: Vec<String> = self
                    .state
                    .quotes
                    .iter()
                    .map(|q| q.reference.clone())
                    .collect();
                let mut body = json!(Envelope {
                    data: booking.subscription_request(&references)
                });
                body["data"]["bookingNumber"] = json!(format!("{}-R", booking.number));
                (
                    Operation::Subscription,
                    self.context(None, None, None),
                    Some(body),
                )
            }
            ErrorCase::UnknownContract => {
                let context =
                    self.context(None, Some(&format!("ct-unknown-{}", booking.number)), None);
                (Operation::Claim, context, Some(json!({ "data": {} })))
            }
            ErrorCase::UnknownBooking => {
                let mut context = self.context(None, None, None);
                context["booking"]["number"] = json!(format!("{}-U", booking.number));
                let ids: Vec<String> = self.state.quotes.iter().map(|q| q.id.clone()).collect();
                let ids = if ids.is_empty() {
                    vec!["qt-unknown".to_string()]
                } else {
                    ids
                };
                (
                    Operation::Update,
                    context,
                    Some(json!(Envelope {
                        data: booking.update_request(&ids)
                    })),
                )
            }
        };
        let mut spec = self.spec(operation, &step, &context, body, refusal())?;
        if case == ErrorCase::BadToken {
            spec.wrong_token = Some(format!("invalid-{}", booking.number));
        }
        let mut pending = self.send(spec).await;
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
        self.conclude(pending)
    }

    /// A real quote, needed by refusals that must not fail on a missing quote first.
    async fn fresh_quote(&mut self, step: &str) -> Result<(String, String), String> {
        let body = json!(Envelope {
            data: self.booking().quote_request(0, false)
        });
        let (quote, _) = self.quote_call(step, body, None).await?;
        Ok((quote.reference, quote.id))
    }
}

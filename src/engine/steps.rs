//! The positive steps: what each sends, what it checks, and what it hands the next step.

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

use super::call::{CallSpec, Expect, Pending};
use super::flow::{FlowRunner, QuoteRef};
use super::tolerant;
use crate::datagen::{Mutation, Sign};
use crate::models::{Envelope, Operation, WITHDRAWAL};
use crate::record::Check;

pub(super) const CREATED: &[u16] = &[200, 201];
const READ: &[u16] = &[200];
const DELETED: &[u16] = &[200, 202, 204];
const REPORTED: &[u16] = &[200, 201, 202, 204];

impl FlowRunner<'_> {
    /// The template context DESIGN.md lists for endpoint overrides.
    pub fn context(
        &self,
        quote: Option<&QuoteRef>,
        contract: Option<&str>,
        claim_date: Option<&str>,
    ) -> Value {
        let booking = self.booking();
        let mut context = json!({
            "booking": {
                "number": booking.number, "client": booking.client, "currency": booking.currency,
                "travelers": booking.travelers().collect::<Vec<_>>(), "plans": booking.plans,
            },
            "flight": booking.first_flight(),
            "beneficiary": booking.beneficiary,
            "now": Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
        });
        if let Some(quote) = quote {
            context["quote"] = json!(quote);
        }
        if let Some(id) = contract {
            context["contract"] = json!({ "id": id });
        }
        if let Some(date) = claim_date {
            context["claim_date"] = json!(date);
        }
        context
    }

    /// Builds a call from the operation's endpoint: its method, rendered path and body.
    pub fn spec(
        &self,
        operation: Operation,
        step: &str,
        context: &Value,
        default_body: Option<Value>,
        expect: Expect,
    ) -> Result<CallSpec, String> {
        let endpoints = &self.shared.endpoints;
        Ok(CallSpec {
            operation,
            step: step.to_string(),
            method: endpoints.method(operation),
            path: endpoints.path(operation, context)?,
            body: endpoints.body(operation, context, default_body)?,
            expect,
            wrong_token: None,
        })
    }

    /// Finishes the exchange; a failed one fails the step with its first failed check.
    pub fn conclude(&mut self, pending: Pending) -> Result<(), String> {
        let mut failures: Vec<String> = pending
            .checks
            .iter()
            .filter(|c| !c.passed && !c.warning)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        if !pending.status_ok() {
            let answer = match &pending.attempt.response {
                Some(response) => format!("HTTP {}: {}", response.status, response.describe()),
                None => pending.attempt.error.clone().unwrap_or_default(),
            };
            failures.insert(
                0,
                format!(
                    "{} {} answered {answer}",
                    pending.spec.method, pending.spec.path
                ),
            );
        }
        if self.finish(pending) {
            Ok(())
        } else {
            Err(failures.first().cloned().unwrap_or_else(|| "failed".into()))
        }
    }

    /// A call whose answer only needs its status checked (and its layout noted).
    async fn send_and_conclude(&mut self, spec: CallSpec) -> Result<(), String> {
        let mut pending = self.send(spec).await;
        pending.payload();
        self.conclude(pending)
    }

    /// POST /quotes; checks id and reference, and the sign of `priceDelta` when one is expected.
    pub(super) async fn quote_call(
        &mut self,
        step: &str,
        body: Value,
        expected: Option<Sign>,
    ) -> Result<(QuoteRef, Option<f64>), String> {
        let context = self.context(None, None, None);
        let spec = self.spec(
            Operation::Quote,
            step,
            &context,
            Some(body),
            Expect::Success(CREATED),
        )?;
        let mut pending = self.send(spec).await;
        let mut found = None;
        if let Some(payload) = pending.payload() {
            let id = tolerant::string_field(&payload, "id");
            let reference = tolerant::string_field(&payload, "reference");
            pending.checks.push(Check::new(
                "quote_id",
                id.is_some(),
                format!("id: {}", id.as_deref().unwrap_or("missing")),
            ));
            pending.checks.push(Check::new(
                "quote_reference",
                reference.is_some(),
                format!("reference: {}", reference.as_deref().unwrap_or("missing")),
            ));
            let delta = tolerant::price_delta(&payload);
            if let Some(expected) = expected {
                pending.checks.push(delta_check(&delta, expected));
            }
            if let (Some(id), Some(reference)) = (id, reference) {
                found = Some((
                    QuoteRef { id, reference },
                    delta.ok().flatten().map(|(v, _)| v),
                ));
            }
        }
        self.conclude(pending)?;
        if let Some((quote, _)) = &found {
            self.state.made_quotes.push(quote.clone());
        }
        found.ok_or_else(|| "the quote answer had no id or reference".into())
    }

    pub async fn quote(&mut self) -> Result<(), String> {
        let booking = self.booking().clone();
        for plan in 0..booking.plans.len() {
            let (quote, _) = self
                .quote_call(
                    "quote",
                    json!(Envelope {
                        data: booking.quote_request(plan, false)
                    }),
                    None,
                )
                .await?;
            self.state.open_quotes.push(quote);
        }
        Ok(())
    }

    pub async fn subscribe(&mut self) -> Result<(), String> {
        let references: Vec<String> = self
            .state
            .open_quotes
            .iter()
            .map(|q| q.reference.clone())
            .collect();
        let body = json!(Envelope {
            data: self.booking().subscription_request(&references)
        });
        let context = self.context(self.state.open_quotes.first(), None, None);
        let spec = self.spec(
            Operation::Subscription,
            "subscribe",
            &context,
            Some(body),
            Expect::Success(CREATED),
        )?;
        self.send_and_conclude(spec).await?;
        self.state.quotes = std::mem::take(&mut self.state.open_quotes);
        self.state.subscribed_at = Some(Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true));
        Ok(())
    }

    /// A complete new booking: update quote(s) with the booking number, then PATCH.
    pub async fn update(&mut self, mutation: Option<Mutation>) -> Result<(), String> {
        let mutation =
            mutation.unwrap_or(Mutation::ALL[self.instance.ordinal as usize % Mutation::ALL.len()]);
        let update = self
            .shared
            .generator
            .update(self.booking(), mutation, self.instance.index);
        // With several flight plans each quote's delta is against the whole contract: only a
        // single-plan update has a sign to check.
        let single = update.booking.plans.len() == 1;
        let mut quotes = Vec::new();
        let mut total_delta = None;
        for plan in 0..update.booking.plans.len() {
            let body = json!(Envelope {
                data: update.booking.quote_request(plan, true)
            });
            let (quote, delta) = self
                .quote_call("update", body, single.then_some(update.expected_delta))
                .await?;
            total_delta = delta
                .map(|d| d + total_delta.unwrap_or(0.0))
                .or(total_delta);
            quotes.push(quote);
        }
        let ids: Vec<String> = quotes.iter().map(|q| q.id.clone()).collect();
        let body = json!(Envelope {
            data: update.booking.update_request(&ids)
        });
        let context = self.context(quotes.first(), None, None);
        let spec = self.spec(
            Operation::Update,
            "update",
            &context,
            Some(body),
            Expect::Success(CREATED),
        )?;
        self.send_and_conclude(spec).await?;
        self.state.booking = Some(update.booking);
        self.state.quotes = quotes;
        self.state.price_delta = total_delta;
        self.state.mutation = Some(update.mutation);
        Ok(())
    }

    pub async fn read_contracts_call(&mut self, step: &str) -> Result<Pending, String> {
        let context = self.context(None, None, None);
        let spec = self.spec(
            Operation::ReadContracts,
            step,
            &context,
            None,
            Expect::Success(READ),
        )?;
        Ok(self.send(spec).await)
    }

    pub async fn read_contracts(&mut self) -> Result<(), String> {
        let mut pending = self.read_contracts_call("read_contracts").await?;
        if let Some(payload) = pending.payload() {
            for product_type in self.booking().product_types.clone() {
                let (found, how) = tolerant::contracts(&payload, &product_type);
                let id = found.first().and_then(|c| tolerant::string_field(c, "id"));
                let detail = match &id {
                    Some(id) => format!("{product_type} contract {id} ({how})"),
                    None => format!(
                        "no {product_type} contract with an id in: {}",
                        excerpt(&payload)
                    ),
                };
                pending.checks.push(Check::new(
                    &format!("contract_{}", product_type.to_lowercase()),
                    id.is_some(),
                    detail,
                ));
                if let Some(id) = id {
                    if let Some(status) = found.first().and_then(|c| tolerant::claim_status(c)) {
                        self.state.claim_status = Some(status);
                    }
                    pending.layout = Some(format!(
                        "{}; contracts {how}",
                        pending.layout.take().unwrap_or_default()
                    ));
                    self.state.contracts.insert(product_type, id);
                }
            }
        }
        self.conclude(pending)
    }

    pub async fn delete_quote(&mut self) -> Result<(), String> {
        let quote = self
            .state
            .open_quotes
            .last()
            .cloned()
            .ok_or("no open quote to delete")?;
        let context = self.context(Some(&quote), None, None);
        let spec = self.spec(
            Operation::QuoteDeletion,
            "delete_quote",
            &context,
            None,
            Expect::Success(DELETED),
        )?;
        let pending = self.send(spec).await;
        self.conclude(pending)?;
        self.state.open_quotes.pop();
        Ok(())
    }

    pub async fn report_flight_cancellation(&mut self) -> Result<(), String> {
        let context = self.context(
            self.state.quotes.first(),
            self.state.contracts.get(WITHDRAWAL).map(String::as_str),
            None,
        );
        let spec = self.spec(
            Operation::FlightCancellation,
            "report_flight_cancellation",
            &context,
            None,
            Expect::Success(REPORTED),
        )?;
        self.send_and_conclude(spec).await
    }
}

fn delta_check(delta: &Result<Option<(f64, &'static str)>, String>, expected: Sign) -> Check {
    match delta {
        Ok(Some((value, shape))) => Check::new(
            "price_delta_sign",
            Sign::of(*value) == expected,
            format!("priceDelta {value} ({shape}), expected {expected:?}"),
        ),
        Ok(None) => Check::fail(
            "price_delta_sign",
            "an update quote must carry priceDelta; none found",
        ),
        Err(e) => Check::fail("price_delta_sign", e.clone()),
    }
}

/// A short quote of a body for check details.
pub fn excerpt(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= 300 {
        text
    } else {
        format!("{}…", &text[..text.floor_char_boundary(300)])
    }
}

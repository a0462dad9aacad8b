//! The positive steps: what each sends, what it checks, and what it hands the next step.

use std::time::{Duration, Instant};

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

use super::call::{CallSpec, Expect, Pending};
use super::flow::{FlowRunner, QuoteRef};
use super::tolerant;
use crate::config::Environment;
use crate::datagen::{Mutation, Sign};
use crate::models::{CHANGE_FOR_ANY_REASON, ClaimRequest, Envelope, Operation, WITHDRAWAL};
use crate::record::Check;

const CREATED: &[u16] = &[200, 201];
const READ: &[u16] = &[200];
const DELETED: &[u16] = &[200, 202, 204];
const REPORTED: &[u16] = &[200, 201, 202, 204];
/// Claim statuses after which waiting for another is pointless.
const SETTLED: [&str; 3] = ["REFUNDED", "REJECTED", "MANUAL_VERIFICATION_NEEDED"];

/// A postdated claim must land at least 24 h after the subscription; an hour more absorbs clock skew.
const CLAIM_DATE_MARGIN_HOURS: i64 = 25;

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
        let status = pending.attempt.status();
        let mut failures: Vec<String> = pending
            .checks
            .iter()
            .filter(|c| !c.passed && !c.warning)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        if !pending.status_ok() {
            let answer = status.map_or_else(
                || pending.attempt.error.clone().unwrap_or_default(),
                |s| format!("HTTP {s}"),
            );
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
        let mut pending = self.send(spec).await;
        pending.payload();
        self.conclude(pending)?;
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
        let mut pending = self.send(spec).await;
        pending.payload();
        self.conclude(pending)?;
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

    /// The staging-only `claimDate`: 25 h after the subscription; never sent to production.
    fn claim_date(&self) -> Option<String> {
        if self.shared.environment == Environment::Production {
            return None;
        }
        let subscribed = self
            .state
            .subscribed_at
            .as_deref()
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
            .map(|at| at.with_timezone(&Utc))
            .unwrap_or_else(Utc::now);
        Some(
            (subscribed + chrono::Duration::hours(CLAIM_DATE_MARGIN_HOURS))
                .to_rfc3339_opts(SecondsFormat::Secs, true),
        )
    }

    pub async fn claim(&mut self, product_type: Option<&str>) -> Result<(), String> {
        let product_type = product_type.unwrap_or(WITHDRAWAL).to_string();
        let contract = self
            .state
            .contracts
            .get(&product_type)
            .cloned()
            .ok_or_else(|| format!("no {product_type} contract id was read"))?;
        self.state.claimed = Some((product_type.clone(), contract.clone()));
        let claim_date = self.claim_date();
        let booking = self.booking();
        let cfar = product_type == CHANGE_FOR_ANY_REASON;
        let request = ClaimRequest {
            modification_cost: cfar
                .then(|| json!(crate::datagen::round_cents(booking.trip_price() * 0.2))),
            product_type: cfar.then(|| product_type.clone()),
            claim_date: claim_date.clone(),
            beneficiary: Some(booking.beneficiary.clone()),
        };
        let context = self.context(None, Some(&contract), claim_date.as_deref());
        let spec = self.spec(
            Operation::Claim,
            "claim",
            &context,
            Some(json!(Envelope { data: request })),
            Expect::Success(CREATED),
        )?;
        let mut pending = self.send(spec).await;
        if let Some(payload) = pending.payload() {
            let status = tolerant::string_field(&payload, "status")
                .or_else(|| tolerant::claim_status(&payload));
            if let Some(status) = &status {
                let flagged = status == "MANUAL_VERIFICATION_NEEDED";
                let detail = if flagged {
                    "flagged MANUAL_VERIFICATION_NEEDED: claim within 24 h of the subscription"
                        .to_string()
                } else {
                    format!("claim status {status}")
                };
                pending
                    .checks
                    .push(Check::new("not_flagged", !flagged, detail).warning());
            }
            self.state.claim_status = status;
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
        let mut pending = self.send(spec).await;
        pending.payload();
        self.conclude(pending)
    }

    /// Polls the contracts until the claim shows `target`; a settled other status fails at once.
    pub async fn await_claim_status(
        &mut self,
        target: &str,
        timeout_secs: u64,
        interval_ms: u64,
    ) -> Result<(), String> {
        let (product_type, contract) = self.state.claimed.clone().ok_or("no claim was made")?;
        let deadline = Instant::now() + Duration::from_secs(timeout_secs);
        loop {
            let mut pending = self.read_contracts_call("await_claim_status").await?;
            let status = pending.payload().and_then(|payload| {
                let (found, _) = tolerant::contracts(&payload, &product_type);
                found
                    .iter()
                    .find(|c| tolerant::string_field(c, "id").as_deref() == Some(contract.as_str()))
                    .and_then(|c| tolerant::claim_status(c))
            });
            pending.checks.push(Check::new(
                "claim_status",
                status.is_some(),
                format!(
                    "claim status: {}",
                    status.as_deref().unwrap_or("unreadable")
                ),
            ));
            self.conclude(pending)?;
            let status = status.unwrap_or_default();
            self.state.claim_status = Some(status.clone());
            if status == target {
                return Ok(());
            }
            if SETTLED.contains(&status.as_str()) {
                return Err(format!("claim settled in {status}, not {target}"));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "claim still {status} after {timeout_secs} s, waiting for {target}"
                ));
            }
            if !self
                .shared
                .cancel
                .sleep(Duration::from_millis(interval_ms))
                .await
            {
                return Err("interrupted while waiting".into());
            }
        }
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

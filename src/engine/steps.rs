//! The positive steps: what each sends, what it checks, and what it hands the next step.

use super::step_error::{StepError, missing};
use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

use super::caller::{CallSpec, Expect, Pending};
use super::flow::{FlowRunner, QuoteRef};
use super::reading::{Need, as_text};
use super::tolerant;
use crate::datagen::{Mutation, Sign};
use crate::models::{Envelope, Operation, ProductType};
use crate::record::Check;

pub(super) const CREATED: &[u16] = &[200, 201];
const READ: &[u16] = &[200];
const DELETED: &[u16] = &[200, 202, 204];
const REPORTED: &[u16] = &[200, 201, 202, 204];

impl FlowRunner<'_> {
    /// The template context docs/design.md lists for endpoint overrides.
    pub fn context(
        &self,
        quote: Option<&QuoteRef>,
        contract: Option<&str>,
        claim_date: Option<&str>,
    ) -> Value {
        let mut context = crate::endpoints::context::booking_context(self.booking());
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
    ) -> Result<CallSpec, StepError> {
        let endpoints = &self.shared.endpoints;
        // A dialect's body template re-spells the body the spec would send, given as `request`.
        let body = match &default_body {
            Some(request) if endpoints.has_body_template(operation) => {
                let mut context = context.clone();
                context["request"] = request.clone();
                endpoints
                    .body(operation, &context, default_body)
                    .map_err(StepError::Template)?
            }
            _ => endpoints
                .body(operation, context, default_body)
                .map_err(StepError::Template)?,
        };
        Ok(CallSpec {
            operation,
            step: step.to_string(),
            method: endpoints.method(operation),
            path: endpoints
                .path(operation, context)
                .map_err(StepError::Template)?,
            body,
            expect,
            wrong_token: None,
        })
    }

    /// Finishes the exchange; a failed one fails the step with its first failed check.
    pub fn conclude(&mut self, pending: Pending) -> Result<(), StepError> {
        let mut failures: Vec<String> = pending
            .checks
            .iter()
            .filter(|c| !c.passed && !c.warning)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        if !pending.status_ok() {
            let answer = match &pending.attempt.response {
                Some(response) => {
                    format!("answered HTTP {}: {}", response.status, response.describe())
                }
                None => format!(
                    "got no answer ({})",
                    pending.attempt.error.as_deref().unwrap_or("none came")
                ),
            };
            failures.insert(
                0,
                format!("{} {} {answer}", pending.spec.method, pending.spec.path),
            );
        }
        if self.finish(pending) {
            return Ok(());
        }
        let mut reason = failures.first().cloned().unwrap_or_else(|| "failed".into());
        let others: Vec<&str> = failures
            .iter()
            .skip(1)
            .filter_map(|f| f.split(':').next())
            .collect();
        if !others.is_empty() {
            reason = format!("{reason} (also failed: {})", others.join(", "));
        }
        Err(StepError::Call(reason))
    }

    /// A call whose answer only needs its status checked (and its layout noted).
    async fn send_and_conclude(&mut self, spec: CallSpec) -> Result<(), StepError> {
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
    ) -> Result<(QuoteRef, Option<f64>), StepError> {
        let context = self.context(None, None, None);
        let spec = self.spec(
            Operation::Quote,
            step,
            &context,
            Some(body),
            Expect::Success(CREATED),
        )?;
        let mut pending = self.send(spec).await;
        pending.payload();
        let id = self.read_builtin(&mut pending, "id", &context, Need::Required);
        let reference = self.read_builtin(&mut pending, "reference", &context, Need::Required);
        let need_delta = if expected.is_some() {
            Need::Required
        } else {
            Need::Optional
        };
        let delta = self
            .read_builtin(&mut pending, "price_delta", &context, need_delta)
            .map(|v| tolerant::delta_amount(&v));
        if let (Some(expected), Some(delta)) = (expected, &delta) {
            pending.checks.push(delta_check(delta, expected));
        }
        let found = match (
            id.as_ref().and_then(as_text),
            reference.as_ref().and_then(as_text),
        ) {
            (Some(id), Some(reference)) => Some((
                QuoteRef { id, reference },
                delta.and_then(Result::ok).map(|(v, _)| v),
            )),
            _ => None,
        };
        self.conclude(pending)?;
        if let Some((quote, _)) = &found {
            self.state.made_quotes.push(quote.clone());
        }
        found.ok_or_else(|| missing("the quote answer had no id or reference"))
    }

    pub async fn quote(&mut self) -> Result<(), StepError> {
        let booking = self.booking().clone();
        for plan in 0..booking.plans.len() {
            let (quote, _) = self
                .quote_call(
                    &self.step_name.clone(),
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

    pub async fn subscribe(&mut self) -> Result<(), StepError> {
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
        let contract = self
            .write_contract(Operation::Subscription, &context, body)
            .await?;
        if let (Some(id), Some(product_type)) = (
            contract.as_ref().and_then(as_text),
            self.booking().product_types.first().cloned(),
        ) {
            self.state.contracts.insert(product_type, id);
        }
        self.state.quotes = std::mem::take(&mut self.state.open_quotes);
        self.state.subscribed_at = Some(Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true));
        Ok(())
    }

    /// A subscription or a PATCH: nothing has to be read from its answer (contracts are read
    /// later), but a configured capture is; the contract id if one was read.
    async fn write_contract(
        &mut self,
        operation: Operation,
        context: &Value,
        body: Value,
    ) -> Result<Option<Value>, StepError> {
        let spec = self.spec(
            operation,
            &self.step_name,
            context,
            Some(body),
            Expect::Success(CREATED),
        )?;
        let mut pending = self.send(spec).await;
        pending.payload();
        let contract = self.read_builtin(&mut pending, "contract_id", context, Need::Optional);
        self.read_builtin(&mut pending, "price_delta", context, Need::Optional);
        self.conclude(pending)?;
        Ok(contract)
    }

    /// A complete new booking: update quote(s) with the booking number, then PATCH.
    pub async fn update(&mut self, mutation: Option<Mutation>) -> Result<(), StepError> {
        let mutation =
            mutation.unwrap_or(Mutation::ALL[self.instance.ordinal as usize % Mutation::ALL.len()]);
        let update = self
            .shared
            .generator
            .update(self.booking(), mutation, self.instance.index);
        // With several flight plans each quote's delta is against the whole contract: only a
        // single-plan update has a sign to check.
        let single = update.booking.plans.len() == 1;
        let plans = update.booking.plans.len();
        // Resumed inside this step: the update quotes made before the interruption are the
        // ones to use (a new quote would price against an update the server may already hold).
        let (quotes, total_delta) = match self.recorded_update_quotes(plans) {
            Some(recorded) => recorded,
            None => {
                let mut quotes = Vec::new();
                let mut total_delta = None;
                for plan in 0..plans {
                    let body = json!(Envelope {
                        data: update.booking.quote_request(plan, true)
                    });
                    let (quote, delta) = self
                        .quote_call(
                            &self.step_name.clone(),
                            body,
                            single.then_some(update.expected_delta),
                        )
                        .await?;
                    total_delta = delta
                        .map(|d| d + total_delta.unwrap_or(0.0))
                        .or(total_delta);
                    quotes.push(quote);
                }
                (quotes, total_delta)
            }
        };
        let patched = self
            .done_in_step
            .iter()
            .any(|e| e.operation == Operation::Update);
        if !patched {
            let ids: Vec<String> = quotes.iter().map(|q| q.id.clone()).collect();
            let body = json!(Envelope {
                data: update.booking.update_request(&ids)
            });
            let context = self.context(quotes.first(), None, None);
            self.write_contract(Operation::Update, &context, body)
                .await?;
        }
        self.state.booking = Some(update.booking);
        self.state.quotes = quotes;
        self.state.price_delta = total_delta;
        self.state.mutation = Some(update.mutation);
        Ok(())
    }

    /// The update quotes an interrupted run of this step made, as its journal recorded them.
    fn recorded_update_quotes(&mut self, plans: usize) -> Option<(Vec<QuoteRef>, Option<f64>)> {
        let read = |e: &crate::record::Exchange, name: &str| {
            e.reads
                .iter()
                .find(|r| r.name == name)
                .and_then(|r| r.value.clone())
        };
        let mut quotes = Vec::new();
        let mut delta = None;
        for exchange in self
            .done_in_step
            .iter()
            .filter(|e| e.operation == Operation::Quote)
        {
            let (Some(id), Some(reference)) = (read(exchange, "id"), read(exchange, "reference"))
            else {
                return None;
            };
            quotes.push(QuoteRef { id, reference });
            if let Some(value) = read(exchange, "price_delta").and_then(|v| v.parse::<f64>().ok()) {
                delta = Some(delta.unwrap_or(0.0) + value);
            }
        }
        if quotes.len() != plans {
            return None;
        }
        self.state.made_quotes.extend(quotes.iter().cloned());
        Some((quotes, delta))
    }

    pub async fn read_contracts_call(&mut self, step: &str) -> Result<Pending, StepError> {
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

    pub async fn read_contracts(&mut self) -> Result<(), StepError> {
        let mut pending = self.read_contracts_call(&self.step_name.clone()).await?;
        pending.payload();
        for product_type in self.booking().product_types.clone() {
            let mut context = self.context(None, None, None);
            context["product_type"] = json!(product_type);
            let id = self
                .read_builtin(&mut pending, "contract_id", &context, Need::Required)
                .as_ref()
                .and_then(as_text);
            let status = self
                .read_builtin(&mut pending, "claim_status", &context, Need::Optional)
                .as_ref()
                .and_then(as_text);
            if let Some(id) = id {
                if status.is_some() {
                    self.state.claim_status = status.map(Into::into);
                }
                self.state.contracts.insert(product_type, id);
            }
        }
        self.conclude(pending)
    }

    pub async fn delete_quote(&mut self) -> Result<(), StepError> {
        let quote = self
            .state
            .open_quotes
            .last()
            .cloned()
            .ok_or_else(|| missing("no open quote to delete"))?;
        let context = self.context(Some(&quote), None, None);
        let spec = self.spec(
            Operation::QuoteDeletion,
            &self.step_name,
            &context,
            None,
            Expect::Success(DELETED),
        )?;
        let pending = self.send(spec).await;
        self.conclude(pending)?;
        self.state.open_quotes.pop();
        Ok(())
    }

    pub async fn report_flight_cancellation(&mut self) -> Result<(), StepError> {
        let context = self.context(
            self.state.quotes.first(),
            (self.state.contracts)
                .get(&ProductType::Withdrawal)
                .map(String::as_str),
            None,
        );
        let spec = self.spec(
            Operation::FlightCancellation,
            &self.step_name,
            &context,
            None,
            Expect::Success(REPORTED),
        )?;
        self.send_and_conclude(spec).await
    }
}

fn delta_check(delta: &Result<(f64, &'static str), String>, expected: Sign) -> Check {
    match delta {
        Ok((value, shape)) => Check::new(
            "price_delta_sign",
            Sign::of(*value) == expected,
            format!("priceDelta {value} ({shape}), expected {expected}"),
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

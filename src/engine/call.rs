//! One logical call of a step: send (with retries), record every attempt, settle the gate,
//! reconcile a conflict that follows a lost answer, and finish the exchange with its checks.

use reqwest::Method;
use serde_json::Value;

use super::client::{Attempt, Request};
use super::events::RunEvent;
use super::flow::FlowRunner;
use super::gate::GateState;
use super::tolerant;
use crate::models::{Operation, ProductType};
use crate::record::{Check, Exchange, Outcome};
use crate::scenario::ExpectedStatus;

/// What a step asks for.
pub struct CallSpec {
    pub operation: Operation,
    pub step: String,
    pub method: Method,
    pub path: String,
    pub body: Option<Value>,
    pub expect: Expect,
    pub wrong_token: Option<String>,
}

/// The statuses that count as the expected answer.
pub enum Expect {
    Success(&'static [u16]),
    Refusal(ExpectedStatus),
}

impl Expect {
    fn matches(&self, status: u16) -> bool {
        match self {
            Expect::Success(codes) => codes.contains(&status),
            Expect::Refusal(expected) => expected.matches(status),
        }
    }

    fn describe(&self) -> String {
        match self {
            Expect::Success(codes) => codes
                .iter()
                .map(u16::to_string)
                .collect::<Vec<_>>()
                .join(" or "),
            Expect::Refusal(expected) => expected.to_string(),
        }
    }
}

/// The final attempt of a call, not yet recorded: the step adds its checks first.
pub struct Pending {
    pub attempt: Attempt,
    pub spec: CallSpec,
    pub checks: Vec<Check>,
    pub reconciled: bool,
    pub layout: Option<String>,
    pub reads: Vec<crate::record::ValueRead>,
}

impl Pending {
    /// The payload of the answer (unwrapped from `data`), when the status was the expected one.
    pub fn payload(&mut self) -> Option<Value> {
        let response = self.attempt.response.as_ref()?;
        if !self.spec.expect.matches(response.status) || self.reconciled {
            return None;
        }
        let body = response.json();
        let (payload, wrapped) = tolerant::payload(&body);
        self.layout
            .get_or_insert_with(|| tolerant::wrap_note(wrapped).to_string());
        Some(payload.clone())
    }

    /// The whole JSON body of the answer, when the status was the expected one.
    pub fn success_body(&self) -> Option<Value> {
        let response = self.attempt.response.as_ref()?;
        (self.spec.expect.matches(response.status) && !self.reconciled).then(|| response.json())
    }

    pub fn status_ok(&self) -> bool {
        self.reconciled
            || self
                .attempt
                .status()
                .is_some_and(|s| self.spec.expect.matches(s))
    }
}

impl FlowRunner<'_> {
    fn exchange(&self, attempt: &Attempt, spec: &CallSpec) -> Exchange {
        Exchange {
            seq: 0,
            flow: self.instance.label.clone(),
            step: spec.step.clone(),
            operation: spec.operation,
            booking_number: self.state.booking.as_ref().map(|b| b.number.clone()),
            attempt: attempt.number,
            method: spec.method.to_string(),
            url: attempt.url.clone(),
            started_at: attempt.started_at.clone(),
            duration_ms: attempt.duration.as_millis() as u64,
            request: attempt.request.clone(),
            response: attempt.response.clone(),
            outcome: Outcome::Error,
            checks: Vec::new(),
            error: attempt.error.clone(),
            expected_error: matches!(spec.expect, Expect::Refusal(_)),
            retried: false,
            maybe_processed: attempt.maybe_processed,
            reconciled: false,
            layout: None,
            reads: Vec::new(),
        }
    }

    /// Sends the call; records the attempts that were retried; returns the final one pending.
    /// A conflict that follows a lost answer is reconciled before it is returned.
    pub async fn send(&mut self, spec: CallSpec) -> Pending {
        let (mut pending, lost_before) = self.send_raw(spec).await;
        let conflict = matches!(
            (pending.spec.operation, pending.attempt.status()),
            (Operation::QuoteDeletion, Some(404)) | (_, Some(409))
        );
        if conflict
            && matches!(pending.spec.expect, Expect::Success(_))
            && (lost_before || self.resumed_mid_step)
        {
            self.reconcile(&mut pending).await;
        }
        pending.checks.extend(error_body_check(&pending));
        pending
    }

    /// Sends without reconciling; also says whether an earlier attempt's answer was lost.
    async fn send_raw(&mut self, spec: CallSpec) -> (Pending, bool) {
        let request = Request {
            method: spec.method.clone(),
            path: spec.path.clone(),
            body: spec.body.clone(),
            wrong_token: spec.wrong_token.clone(),
            // The first call of a run is not retried without an answer: a dead or hanging
            // target ends the run after one request (exit 4).
            retry_without_answer: !(self.gatekeeper
                && self.shared.gate.state() == GateState::Pending),
        };
        self.shared.events.emit(RunEvent::Sending {
            flow: self.instance.label.clone(),
            step: spec.step.clone(),
            operation: spec.operation,
            method: spec.method.to_string(),
            url: self.shared.client.url(&spec.path),
            at: chrono::Utc::now().to_rfc3339(),
        });
        let mut attempts = self
            .shared
            .client
            .execute(&request, &self.shared.cancel)
            .await;
        let last = attempts.pop().expect("at least one attempt");
        let lost_before = attempts.iter().any(|a| a.maybe_processed);
        for attempt in &attempts {
            let mut exchange = self.exchange(attempt, &spec);
            exchange.retried = true;
            exchange.checks.push(Check::fail(
                "retryable",
                attempt
                    .error
                    .clone()
                    .unwrap_or_else(|| format!("HTTP {}: retried", attempt.status().unwrap_or(0))),
            ));
            self.shared
                .events
                .emit(RunEvent::ExchangeFinished(Box::new(exchange)));
        }
        if self.gatekeeper && !matches!(spec.expect, Expect::Refusal(_)) {
            let state = match (
                last.status(),
                attempts.iter().chain([&last]).all(|a| a.unreachable),
            ) {
                (Some(401), _) => GateState::TokenRejected,
                // A target that never answers is as unreachable as one that refuses connections.
                (None, _) => GateState::Unreachable,
                _ => GateState::Open,
            };
            self.shared.gate.settle(state);
        }
        (
            Pending {
                attempt: last,
                spec,
                checks: Vec::new(),
                reconciled: false,
                layout: None,
                reads: Vec::new(),
            },
            lost_before,
        )
    }

    /// A conflict after an answer was lost: was it our own earlier attempt that succeeded?
    async fn reconcile(&mut self, pending: &mut Pending) {
        let confirmed = match pending.spec.operation {
            Operation::Subscription => self.reconcile_by_reading(&pending.spec.step, None).await,
            Operation::Claim => {
                let claimed = self.state.claimed.clone();
                self.reconcile_by_reading(&pending.spec.step, claimed).await
            }
            // The quote is used, the flight reported, the quote gone: by this flow's own lost request.
            Operation::Update | Operation::FlightCancellation | Operation::QuoteDeletion => {
                Some("the conflict shows the lost attempt took effect".to_string())
            }
            _ => None,
        };
        if let Some(detail) = confirmed {
            pending.reconciled = true;
            pending.checks.push(Check::pass(
                "reconciled",
                format!("answer to an earlier attempt was lost; {detail}; counted once"),
            ));
        }
    }

    /// Reads the booking's contracts: the subscription exists, or the claimed contract shows a claim.
    async fn reconcile_by_reading(
        &mut self,
        step: &str,
        claimed: Option<(ProductType, String)>,
    ) -> Option<String> {
        let context = self.context(None, None, None);
        let spec = self
            .spec(
                Operation::ReadContracts,
                &format!("{step}:reconcile"),
                &context,
                None,
                Expect::Success(&[200]),
            )
            .ok()?;
        let (mut read, _) = self.send_raw(spec).await;
        let payload = read.payload().unwrap_or(Value::Null);
        let result = match &claimed {
            None => {
                let product_type = self
                    .state
                    .booking
                    .as_ref()
                    .and_then(|b| b.product_types.first().copied())
                    .unwrap_or(ProductType::Withdrawal);
                (!tolerant::contracts(&payload, product_type.as_str())
                    .0
                    .is_empty())
                .then(|| "the booking's contracts exist".to_string())
            }
            Some((product_type, id)) => {
                let status =
                    super::reading::claimed_contract_status(&payload, product_type.as_str(), id)
                        .and_then(|(status, _)| status.as_str().map(str::to_string));
                status.map(|status| {
                    self.state.claim_status = Some(status.clone().into());
                    format!("the contract shows a claim in status {status}")
                })
            }
        };
        read.checks.push(Check::new(
            "reconciliation",
            result.is_some(),
            result
                .clone()
                .unwrap_or_else(|| "nothing confirms the earlier attempt".into()),
        ));
        self.finish(read);
        result
    }

    /// Records the final attempt with the step's checks; true when the exchange passed.
    pub fn finish(&mut self, mut pending: Pending) -> bool {
        let status_check = match (pending.attempt.status(), pending.reconciled) {
            (_, true) => None,
            (Some(status), _) => Some(Check::new(
                "status",
                pending.spec.expect.matches(status),
                format!("HTTP {status}, expected {}", pending.spec.expect.describe()),
            )),
            (None, _) => Some(Check::fail(
                "answer",
                pending
                    .attempt
                    .error
                    .clone()
                    .unwrap_or_else(|| "no answer".into()),
            )),
        };
        let mut checks: Vec<Check> = status_check.into_iter().collect();
        checks.append(&mut pending.checks);
        let passed = checks.iter().all(|c| c.passed || c.warning);
        let mut exchange = self.exchange(&pending.attempt, &pending.spec);
        exchange.outcome = match (
            passed,
            pending.attempt.response.is_some() || pending.reconciled,
        ) {
            (true, _) => Outcome::Passed,
            (false, true) => Outcome::Failed,
            (false, false) => Outcome::Error,
        };
        exchange.checks = checks;
        exchange.reconciled = pending.reconciled;
        exchange.layout = pending.layout;
        exchange.reads = pending.reads;
        self.shared
            .events
            .emit(RunEvent::ExchangeFinished(Box::new(exchange)));
        passed
    }
}

/// A success status whose body states an error (some gateways answer 200 with an error
/// object): the server did not do what was asked, whatever the status says.
fn error_body_check(pending: &Pending) -> Option<Check> {
    let response = pending.attempt.response.as_ref()?;
    let success = matches!(pending.spec.expect, Expect::Success(_))
        && pending.spec.expect.matches(response.status);
    let words = success.then(|| response.error_words()).flatten()?;
    Some(Check::fail(
        "error_body",
        format!(
            "HTTP {} but the body states an error: {words}",
            response.status
        ),
    ))
}

//! The transport half of a step's call: send (with retries), record every attempt on the event
//! stream, settle the gate with the first call, and finish the exchange with the step's
//! checks. It knows nothing of the flow's state: the steps and their calls (`step/`) do.

use std::sync::Arc;

use reqwest::Method;
use serde_json::Value;

use super::events::RunEvent;
use super::gate::GateState;
use super::http::{Attempt, Request, Told};
use super::shared::Shared;
use crate::answer::tolerant;
use crate::endpoints::SuccessRule;
use crate::models::Operation;
use crate::record::{Check, Delivery, Exchange, Expectation, Outcome, Phase};
use crate::scenario::ExpectedStatus;
use crate::timestamp::Timestamp;

/// What a step asks for.
#[derive(Clone)]
pub(super) struct CallSpec {
    pub operation: Operation,
    pub step: String,
    pub method: Method,
    pub path: String,
    pub body: Option<crate::endpoints::Payload>,
    /// The endpoint's configured headers, rendered.
    pub headers: Vec<(String, String)>,
    pub expect: Expect,
    pub wrong_token: Option<String>,
    /// The template context the call was built with: a wait's condition and the captures
    /// are evaluated over it, with what the answer gave.
    pub context: Value,
    /// The `captured.NAME` values its templates read, and which step captured each where.
    pub uses: Vec<crate::record::ValueRead>,
}

/// The statuses that count as the expected answer.
#[derive(Clone)]
pub(super) enum Expect {
    /// The endpoint's success rule (any 2xx unless `expect` says otherwise).
    Success(SuccessRule),
    Refusal(ExpectedStatus),
}

impl Expect {
    pub(super) fn matches(&self, status: u16) -> bool {
        match self {
            Expect::Success(rule) => rule.accepts(status),
            Expect::Refusal(expected) => expected.matches(status),
        }
    }

    fn describe(&self) -> String {
        match self {
            Expect::Success(rule) => rule.describe(),
            Expect::Refusal(expected) => expected.to_string(),
        }
    }

    /// A success the spec states with another status: noted, never failed.
    fn deviation(&self, status: u16) -> Option<Check> {
        match self {
            Expect::Success(rule) => rule.deviation_check(status),
            Expect::Refusal(_) => None,
        }
    }
}

/// The final attempt of a call, not yet recorded: the step adds its checks first.
pub(super) struct Pending {
    pub attempt: Attempt,
    pub spec: CallSpec,
    pub checks: Vec<Check>,
    pub layout: Option<String>,
    pub reads: Vec<crate::record::ValueRead>,
    /// Not sent: the answer an interrupted run already recorded (and counted) for this call,
    /// given back to the resumed step. Finishing it records nothing new.
    pub replayed: bool,
    /// The answer as its values are read, when that is not the whole body: the chosen entry
    /// of a multi-bundle quote answer (`answer/bundles.rs`).
    pub view: Option<Value>,
    /// The values read from the answer, for `captured`: (name, value, where).
    pub captured: Vec<(String, Value, String)>,
    /// A poll of a wait whose condition did not hold: recorded, never counted.
    pub poll: bool,
    /// A write under confirmation, or a read confirming one (see [`Phase`]).
    pub phase: Phase,
    /// The write a confirmation read confirms: its `confirm` table's captures read this answer.
    pub confirms: Option<Operation>,
}

impl Pending {
    /// The recorded, counted exchange of an interrupted step, as the answer to `spec`: the
    /// resumed step reads it as if it had just come, and nothing is sent or counted again.
    pub(super) fn replayed(exchange: &Exchange, spec: CallSpec) -> Pending {
        Pending {
            attempt: Attempt {
                number: exchange.attempt,
                url: exchange.url.clone(),
                started_at: exchange.started_at,
                duration: std::time::Duration::from_millis(exchange.duration_ms),
                request: exchange.request.clone(),
                response: exchange.response.clone(),
                error: exchange.error.clone(),
                delivery: exchange.delivery,
                unreachable: false,
                token_fingerprint: exchange.token_fingerprint.clone(),
            },
            spec,
            checks: Vec::new(),
            layout: None,
            reads: Vec::new(),
            replayed: true,
            view: None,
            captured: Vec::new(),
            poll: false,
            phase: exchange.phase,
            confirms: None,
        }
    }

    /// The payload of the answer (unwrapped from `data`), when the status was the expected one.
    pub(super) fn payload(&mut self) -> Option<Value> {
        let response = self.attempt.response.as_ref()?;
        if !self.spec.expect.matches(response.status) || self.reconciled() {
            return None;
        }
        let body = response.json();
        let (payload, wrapped) = tolerant::payload(&body);
        self.layout
            .get_or_insert_with(|| tolerant::wrap_note(wrapped).to_string());
        Some(payload.clone())
    }

    /// The whole JSON body of the answer, when the status was the expected one.
    pub(super) fn success_body(&self) -> Option<Value> {
        let response = self.attempt.response.as_ref()?;
        if !self.spec.expect.matches(response.status) || self.reconciled() {
            return None;
        }
        Some(self.view.clone().unwrap_or_else(|| response.json()))
    }

    /// A conflict confirmed this call's own earlier, lost success.
    pub(super) fn reconciled(&self) -> bool {
        self.attempt.delivery == Delivery::Reconciled
    }

    pub(super) fn status_ok(&self) -> bool {
        self.reconciled()
            || self
                .attempt
                .status()
                .is_some_and(|s| self.spec.expect.matches(s))
    }
}

/// Sends one flow's calls and records them.
pub(super) struct Caller<'a> {
    pub shared: &'a Arc<Shared>,
    /// The flow instance's label, which every exchange is recorded under.
    pub flow: &'a str,
    /// This flow makes the run's first call: it settles the gate.
    pub gatekeeper: bool,
}

impl Caller<'_> {
    fn exchange(&self, attempt: &Attempt, spec: &CallSpec, booking: Option<&str>) -> Exchange {
        Exchange {
            seq: 0,
            flow: self.flow.to_string(),
            step: spec.step.clone(),
            operation: spec.operation,
            booking_number: booking.map(str::to_string),
            attempt: attempt.number,
            method: spec.method.to_string(),
            url: attempt.url.clone(),
            started_at: attempt.started_at,
            duration_ms: attempt.duration.as_millis() as u64,
            request: attempt.request.clone(),
            response: attempt.response.clone(),
            outcome: Outcome::Error,
            checks: Vec::new(),
            error: attempt.error.clone(),
            expectation: match spec.expect {
                Expect::Refusal(_) => Expectation::Refusal,
                _ => Expectation::Acceptance,
            },
            retried: false,
            delivery: attempt.delivery,
            layout: None,
            reads: Vec::new(),
            token_fingerprint: attempt.token_fingerprint.clone(),
            poll: false,
            phase: Default::default(),
        }
    }

    /// Sends the call, journaling each attempt before it is sent and each retried one before
    /// its retry; returns the final one pending, and whether an earlier attempt's answer was
    /// lost. The first call settles the gate.
    pub(super) async fn send(&self, spec: CallSpec, booking: Option<&str>) -> (Pending, bool) {
        self.send_from(spec, booking, 1).await
    }

    /// [`send`](Self::send), numbering its attempts from `first`: a call sent again after its
    /// attempts ran out stays one call on the record (the ledger settles a lost attempt by the
    /// attempts that follow it, and takes an attempt 1 for another call).
    pub(super) async fn send_from(
        &self,
        spec: CallSpec,
        booking: Option<&str>,
        first: u32,
    ) -> (Pending, bool) {
        let request = Request {
            method: spec.method.clone(),
            path: spec.path.clone(),
            body: spec.body.clone(),
            headers: spec.headers.clone(),
            wrong_token: spec.wrong_token.clone(),
            // Nothing sent before the first call is answered (that call, and the early flows'
            // first quotes) is retried without an answer: a dead or hanging target ends the
            // run after those few requests (exit 4).
            retry_without_answer: self.shared.gate.state() != GateState::Pending,
            renew_on_rejection: self.shared.gate.state() != GateState::Pending,
            first_attempt: first,
        };
        let url = self.shared.client.url(&spec.path);
        // Write-ahead: each attempt is on the record before it is sent, and a retried one
        // before its retry, so a run killed at any point leaves a line for every request the
        // server may have processed (`--resume` accounts for each).
        let mut tell = |told: Told<'_>| match told {
            Told::Sending(attempt) => self.shared.events.emit(RunEvent::Sending {
                flow: self.flow.to_string(),
                step: spec.step.clone(),
                operation: spec.operation,
                method: spec.method.to_string(),
                url: url.clone(),
                at: Timestamp::now(),
                attempt,
            }),
            Told::Retried(attempt) => self.record_retried(attempt, &spec, booking),
        };
        let mut attempts = self
            .shared
            .client
            .execute_told(&request, &self.shared.cancel, &mut tell)
            .await;
        let last = attempts.pop().expect("at least one attempt");
        if self.shared.client.tokens().given_up() {
            self.shared.gate.reject_token();
        }
        let lost_before = attempts
            .iter()
            .any(|a| a.delivery == Delivery::MaybeProcessed);
        if self.gatekeeper && !matches!(spec.expect, Expect::Refusal(_)) {
            self.shared.gate.settle(first_call(&last));
        }
        (
            Pending {
                attempt: last,
                spec,
                checks: Vec::new(),
                layout: None,
                reads: Vec::new(),
                replayed: false,
                view: None,
                captured: Vec::new(),
                poll: false,
                phase: Default::default(),
                confirms: None,
            },
            lost_before,
        )
    }

    /// Records an attempt the call retried, with the failed `retryable` check saying why.
    pub(super) fn record_retried(&self, attempt: &Attempt, spec: &CallSpec, booking: Option<&str>) {
        let mut exchange = self.exchange(attempt, spec, booking);
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

    /// Records the final attempt with the step's checks; true when the exchange passed.
    pub(super) fn finish(&self, mut pending: Pending, booking: Option<&str>) -> bool {
        let status_check = match (pending.attempt.status(), pending.reconciled()) {
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
        // A 202 under confirmation is not counted on its status: its confirmation says.
        let deviation = (pending.attempt.status())
            .filter(|_| !pending.reconciled() && pending.phase != Phase::Pending)
            .and_then(|status| pending.spec.expect.deviation(status));
        let mut checks: Vec<Check> = status_check.into_iter().chain(deviation).collect();
        checks.append(&mut pending.checks);
        let passed = checks.iter().all(|c| c.passed || c.warning);
        if pending.replayed {
            // Already on the record (and in the ledger) from the interrupted run.
            return passed;
        }
        // The record takes the attempt's request and answer as they are, not a copy of them.
        let request = std::mem::replace(
            &mut pending.attempt.request,
            crate::record::RequestRecord {
                headers: Default::default(),
                body: None,
                cut: None,
            },
        );
        let response = pending.attempt.response.take();
        let answered = response.is_some() || pending.reconciled();
        let mut exchange = self.exchange(&pending.attempt, &pending.spec, booking);
        exchange.request = request;
        exchange.response = response;
        exchange.outcome = match (passed, answered) {
            (true, _) => Outcome::Passed,
            (false, true) => Outcome::Failed,
            (false, false) => Outcome::Error,
        };
        exchange.checks = checks;
        exchange.layout = pending.layout;
        exchange.reads = std::mem::take(&mut pending.spec.uses);
        exchange.reads.append(&mut pending.reads);
        exchange.poll = pending.poll;
        exchange.phase = pending.phase;
        self.shared
            .events
            .emit(RunEvent::ExchangeFinished(Box::new(exchange)));
        passed
    }
}

/// What the run's first call shows: the token rejected, the target unreachable (no answer,
/// whether refused or silent), or the way open.
fn first_call(last: &Attempt) -> GateState {
    match last.status() {
        // A 401 about something else (a gateway's key) is the server's refusal of the call,
        // reported in its words, not a rejected token.
        Some(401) if last.response.as_ref().is_some_and(|r| r.rejects_token()) => {
            GateState::TokenRejected
        }
        // Still unavailable or rate-limited after its retries: the target does not serve, and
        // every other flow would only meet the same (exit 4).
        Some(429 | 502 | 503 | 504) => GateState::Unreachable,
        // The first call is a quote, which every API root has: a 404 says the base URL misses
        // the API (most often its path prefix), and every other call would 404 the same way.
        Some(404) => GateState::NotTheApi,
        Some(_) => GateState::Open,
        None => GateState::Unreachable,
    }
}

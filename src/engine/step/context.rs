//! What a step works with: its flow's state and booking, the call builder (endpoint, template
//! context, body), and the flow's side of sending (see `send.rs`) and reading (`read.rs`).
//! The steps themselves are plain functions over it (`engine/steps.rs`, `claims.rs`,
//! `negative.rs`); running them in order is the [`FlowRunner`](crate::engine::flow::FlowRunner)'s.

use std::sync::Arc;

use serde_json::{Value, json};

use super::error::StepError;
use crate::datagen::Booking;
use crate::endpoints::context::{Known, call_context, idempotency_key};
use crate::engine::caller::{CallSpec, Caller, Expect, Pending};
use crate::engine::shared::Shared;
use crate::engine::state::FlowInstance;
use crate::models::Operation;
use crate::record::{FlowState, QuoteRef};

pub(crate) struct StepContext<'a> {
    pub shared: &'a Arc<Shared>,
    pub instance: &'a FlowInstance,
    pub state: FlowState,
    /// Sends and records this flow's calls.
    pub caller: Caller<'a>,
    pub resumed_mid_step: bool,
    /// What the step interrupted in an earlier run already got done (see
    /// [`ResumePoint`](crate::engine::state::ResumePoint)).
    pub done_in_step: Vec<crate::record::Exchange>,
    /// This step's writes whose answer an earlier run lost, unsettled, with their last
    /// attempt number (see [`ResumePoint`](crate::engine::state::ResumePoint)).
    pub lost_in_step: Vec<(Operation, u32)>,
    /// The running step's name, from [`Step::name`](crate::scenario::Step::name): the only
    /// place step names come from.
    pub step_name: String,
    /// The running step's place in its flow, and how many writes it has built so far: with
    /// the booking and the flow they name each write's idempotency key.
    pub step_index: usize,
    pub writes_in_step: u32,
}

impl StepContext<'_> {
    pub(crate) fn booking(&self) -> &Booking {
        self.state
            .booking
            .as_ref()
            .expect("a flow always has its booking")
    }

    /// The template context docs/design.md lists for endpoint overrides.
    pub(crate) fn context(
        &self,
        quote: Option<&QuoteRef>,
        contract: Option<&str>,
        claim_dates: Option<(String, String)>,
    ) -> Value {
        let known = Known {
            quote: quote.map(|q| (q.id.as_str(), q.reference.as_str())),
            contract,
            claim_dates,
            captured: Some(self.state.captured_values()),
            ..Known::default()
        };
        call_context(self.booking(), &known)
    }

    /// The context of a contracts read: the booking's (first) product type is known, as the
    /// rehearsal before the run assumed.
    pub(crate) fn read_context(&self) -> Value {
        let mut context = self.context(None, None, None);
        let product_type = (self.booking().product_types.first())
            .copied()
            .unwrap_or(crate::models::ProductType::Withdrawal);
        context["product_type"] = json!(product_type);
        context
    }

    /// The success rule of an operation's endpoint.
    pub(crate) fn success(&self, operation: Operation) -> Expect {
        Expect::Success(self.shared.endpoints.success(operation))
    }

    /// The next write's idempotency key: the same for this write on every retry and resume.
    fn next_idempotency_key(&mut self, operation: Operation) -> String {
        let nth = self.writes_in_step;
        self.writes_in_step += 1;
        let step = format!("{}:{}", self.step_index, self.step_name);
        idempotency_key(
            &self.booking().number,
            &self.instance.label,
            &step,
            operation,
            nth,
        )
    }

    /// Builds a call from the operation's endpoint: its method, rendered path and body.
    pub(crate) fn spec(
        &mut self,
        operation: Operation,
        step: &str,
        context: &Value,
        default_body: Option<Value>,
        expect: Expect,
    ) -> Result<CallSpec, StepError> {
        let mut context = context.clone();
        if operation.is_write() {
            context["idempotency_key"] = json!(self.next_idempotency_key(operation));
        }
        let endpoints = &self.shared.endpoints;
        // A dialect's body template re-spells the body the spec would send, given as `request`.
        let body = match &default_body {
            Some(request) if endpoints.has_body_template(operation) => {
                let mut context = context.clone();
                context["request"] = request.clone();
                endpoints
                    .body(operation, &context, default_body)
                    .map_err(|e| StepError::Template(e.to_string()))?
            }
            _ => endpoints
                .body(operation, &context, default_body)
                .map_err(|e| StepError::Template(e.to_string()))?,
        };
        Ok(CallSpec {
            operation,
            step: step.to_string(),
            method: endpoints.method(operation),
            path: endpoints
                .path(operation, &context)
                .map_err(|e| StepError::Template(e.to_string()))?,
            body,
            headers: endpoints
                .headers(operation, &context)
                .map_err(|e| StepError::Template(e.to_string()))?,
            expect,
            wrong_token: None,
            uses: self.captured_uses(operation),
            context,
        })
    }

    /// The `captured.NAME` values the operation's templates read, each with the step that
    /// captured it and where: recorded on the exchange that sends them.
    fn captured_uses(&self, operation: Operation) -> Vec<crate::record::ValueRead> {
        let mut uses: Vec<crate::record::ValueRead> = Vec::new();
        for (template, name) in self.shared.endpoints.captured_reads(operation) {
            let Some(found) = self.state.captured.get(name) else {
                continue;
            };
            let name = format!("captured.{name}");
            if uses.iter().any(|u| u.name == name) {
                continue;
            }
            uses.push(crate::record::ValueRead {
                name,
                value: crate::answer::reading::as_text(&found.value)
                    .or(Some(found.value.to_string())),
                from: format!(
                    "read by {template}; captured by step {} from {}",
                    found.step, found.from
                ),
            });
        }
        uses
    }

    /// Finishes the exchange; a failed one fails the step with its first failed check.
    pub(crate) fn conclude(&mut self, pending: Pending) -> Result<(), StepError> {
        let mut failures: Vec<String> = pending
            .checks
            .iter()
            .filter(|c| !c.passed && !c.warning)
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect();
        if !pending.status_ok() {
            let answer = match &pending.attempt.response {
                Some(response) => {
                    let rule = match &pending.spec.expect {
                        crate::engine::caller::Expect::Success(rule) => rule
                            .refused_by_expect(pending.spec.operation, response.status)
                            .map(|rule| format!(" ({rule})"))
                            .unwrap_or_default(),
                        crate::engine::caller::Expect::Refusal(_) => String::new(),
                    };
                    format!(
                        "answered HTTP {}{rule}: {}",
                        response.status,
                        response.describe()
                    )
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
    pub(crate) async fn send_and_conclude(&mut self, spec: CallSpec) -> Result<(), StepError> {
        let mut pending = self.send(spec).await;
        pending.payload();
        self.conclude(pending)
    }
}

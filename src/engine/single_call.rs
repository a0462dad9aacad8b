//! One call at a time with a run's machinery, for `ppcert probe`: the same call builder
//! (idempotency key, `request`, templates), the same send (a configured wait polled, a write
//! confirmed when its answer is pending or its `confirm` table says so, a lost answer
//! reconciled), and the same `captured` values kept from answer to answer. What a probe
//! learns changes the endpoints between calls, so each call is given the endpoints in force.

use std::sync::Arc;

use serde_json::Value;

use super::caller::Caller;
use super::claims::{Claimed, settle_claim};
use super::events::EventStream;
use super::gate::{Gate, GateState};
use super::http::Attempt;
use super::shared::Shared;
use super::state::FlowInstance;
use super::step::{StepContext, StepError};
use super::steps::read_until_listed;
use super::{ApiClient, Cancel};
use crate::datagen::{Booking, Generator};
use crate::endpoints::Endpoints;
use crate::environment::Environment;
use crate::models::{ClaimStatus, Operation, ProductType};
use crate::record::{CapturedValue, FlowState};

/// A flow of single calls: its client, its generator and the values its answers gave.
pub(crate) struct SingleCalls {
    client: ApiClient,
    generator: Generator,
    cancel: Cancel,
    label: String,
    state: FlowState,
    booking: Option<Booking>,
    calls: usize,
}

/// The answer a call settled on (a confirming read's, when the write was confirmed; the one
/// that met a wait's condition), and the run's checks that failed on the way.
pub(crate) struct Settled {
    /// What was sent: `METHOD URL`.
    pub sent: String,
    pub attempt: Attempt,
    /// Its status is the success the call's rule expects.
    pub status_ok: bool,
    pub failed: Vec<String>,
    /// A claim accepted by its answer: how its confirmation ended.
    pub claim: Option<ClaimOutcome>,
}

impl SingleCalls {
    pub(crate) fn new(client: ApiClient, generator: Generator, cancel: Cancel) -> SingleCalls {
        SingleCalls {
            client,
            generator,
            cancel,
            label: "probe#1".into(),
            state: FlowState::default(),
            booking: None,
            calls: 0,
        }
    }

    /// Keeps a value a caller read from an answer (a built-in reading or a proven capture),
    /// as a run's step keeps what it reads.
    pub(crate) fn keep(&mut self, name: &str, value: Value, from: &str) {
        let step = format!("{}:{}", self.calls, self.label);
        let kept = CapturedValue {
            value,
            step,
            from: from.to_string(),
        };
        self.state.captured.insert(name.to_string(), kept);
    }

    /// The booking the next calls are for: it names their idempotency keys and exchanges.
    pub(crate) fn for_booking(&mut self, booking: &Booking) {
        self.booking = Some(booking.clone());
    }

    /// What a run's flows share, for one call with `endpoints`.
    fn shared(&self, endpoints: &Endpoints) -> Arc<Shared> {
        let gate = Gate::default();
        // The probe judges its first answer itself; every call may be retried.
        gate.settle(GateState::Open);
        Arc::new(Shared {
            client: self.client.clone(),
            endpoints: endpoints.clone(),
            generator: self.generator.clone(),
            environment: Environment::Staging,
            events: Arc::new(EventStream::new(0, Vec::new())),
            cancel: self.cancel.clone(),
            gate,
            concurrency: std::num::NonZeroUsize::MIN,
        })
    }

    /// Sends `op` for the booking in force as a run's step would, with `context` (its `captured`
    /// replaced by the values kept) and the spec's body `default_body`. A contracts read with
    /// `listed` waits as the run's does for the booking's contracts to be listed (the built-in
    /// wait, unless `[endpoints.read_contracts.wait]` replaces it); a claim accepted on
    /// `context`'s `contract.id` is settled as the run's claim step settles it.
    pub(crate) async fn call(
        &mut self,
        endpoints: &Endpoints,
        op: Operation,
        context: &Value,
        default_body: Option<Value>,
        listed: bool,
    ) -> Result<Settled, StepError> {
        let shared = self.shared(endpoints);
        let instance = FlowInstance {
            label: self.label.clone(),
            flow: "probe".into(),
            ordinal: 0,
            index: 0,
            steps: Vec::new(),
            early: false,
        };
        let mut state = std::mem::take(&mut self.state);
        state.booking = Some((self.booking.clone()).unwrap_or_else(|| self.generator.booking(0)));
        self.calls += 1;
        let mut cx = StepContext {
            shared: &shared,
            instance: &instance,
            state,
            caller: Caller {
                shared: &shared,
                flow: &instance.label,
                gatekeeper: false,
            },
            resumed_mid_step: false,
            done_in_step: Vec::new(),
            lost_in_step: Vec::new(),
            step_name: op.as_str().to_string(),
            step_index: self.calls,
            writes_in_step: 0,
        };
        let mut context = context.clone();
        context["captured"] = cx.state.captured_values();
        let settled = send(&mut cx, op, &context, default_body, listed).await;
        self.state = cx.state;
        settled
    }
}

/// Builds and sends the call in `cx`, and settles it as the run's step would.
async fn send(
    cx: &mut StepContext<'_>,
    op: Operation,
    context: &Value,
    default_body: Option<Value>,
    listed: bool,
) -> Result<Settled, StepError> {
    let (expect, step) = (cx.success(op), cx.step_name.clone());
    let spec = cx.spec(op, &step, context, default_body, expect)?;
    let sent = format!("{} {}", spec.method, cx.shared.client.url(&spec.path));
    let request = spec.body.as_ref().and_then(|b| b.json()).cloned();
    let pending = if listed && op == Operation::ReadContracts {
        read_until_listed(cx).await?
    } else {
        cx.send(spec).await
    };
    let failed: Vec<String> = (pending.checks.iter())
        .filter(|c| !c.passed && !c.warning)
        .map(|c| format!("{}: {}", c.name, c.detail))
        .collect();
    let attempt = pending.attempt.clone();
    let status_ok = pending.status_ok();
    let claim = match claimed(op, context) {
        Some((product_type, contract)) if status_ok && failed.is_empty() => {
            let claimed = Claimed {
                product_type,
                contract: &contract,
                context,
                request: request.as_ref(),
            };
            let settled = settle_claim(cx, pending, claimed).await;
            Some(ClaimOutcome::of(settled, cx.state.claim_status.clone()))
        }
        _ => {
            cx.finish(pending);
            None
        }
    };
    Ok(Settled {
        sent,
        attempt,
        status_ok,
        failed,
        claim,
    })
}

/// The contract and product type a claim was sent on, from its context.
fn claimed(op: Operation, context: &Value) -> Option<(ProductType, String)> {
    if op != Operation::Claim {
        return None;
    }
    let contract = context["contract"]["id"].as_str()?.to_string();
    let product_type = (context["product_type"].as_str())
        .and_then(ProductType::parse)
        .unwrap_or(ProductType::Withdrawal);
    Some((product_type, contract))
}

/// How a claim accepted by its answer ended, as the run's claim step ends it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClaimOutcome {
    /// Its status was read (from its answer, else the contracts) and not flagged.
    Status(ClaimStatus),
    /// No read showed its status within `[endpoints.claim.confirm]`'s bounds: the run's
    /// message, with its hint.
    Unconfirmed(String),
    /// Flagged by the provider, or a confirming read failed: the run's message.
    Failed(String),
}

impl ClaimOutcome {
    fn of(settled: Result<(), StepError>, status: Option<ClaimStatus>) -> ClaimOutcome {
        match (settled, status) {
            (Ok(()), Some(status)) => ClaimOutcome::Status(status),
            (Ok(()), None) => ClaimOutcome::Failed("the claim's status was not read".into()),
            (Err(StepError::ClaimStatus(why)), _) => ClaimOutcome::Unconfirmed(why),
            (Err(error), _) => ClaimOutcome::Failed(error.to_string()),
        }
    }
}

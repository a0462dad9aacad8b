//! Runs one flow instance: its steps in order behind the gate, the events of each, and what
//! is recorded when a step fails (the rest are skipped with the reason) or the run is interrupted.

use std::sync::Arc;
use std::time::Instant;

use super::caller::Caller;
use super::events::RunEvent;
use super::shared::Shared;
use super::state::{FlowInstance, ResumePoint};
use super::step::StepContext;
use super::step::StepError;
use super::{claims, negative, steps};
use crate::record::{FlowResult, FlowState, FlowStatus};
use crate::record::{StepEvent, StepStatus};
use crate::scenario::Step;
use crate::timestamp::Timestamp;

/// Runs one flow instance's steps in order: the gate and cancellation before each, the events
/// of each, and the rest skipped once one fails. What a step does is its function's (see
/// [`StepContext`]).
pub(crate) struct FlowRunner<'a> {
    shared: &'a Arc<Shared>,
    instance: &'a FlowInstance,
    cx: StepContext<'a>,
    /// Failpoint for the test of a run killed after a step's last exchange line but before its
    /// step line (hidden, tests only): `PPCERT_TEST_DIE_BEFORE_STEP_LINE=<flow label>:<index>`.
    die_before_step_line: Option<usize>,
}

/// When a step started: the instant it records, and the clock its duration is measured on.
#[derive(Clone, Copy)]
struct Started {
    at: Timestamp,
    clock: Instant,
}

impl Started {
    fn now() -> Started {
        Started {
            at: Timestamp::now(),
            clock: Instant::now(),
        }
    }
}
impl<'a> FlowRunner<'a> {
    pub(crate) fn new(
        shared: &'a Arc<Shared>,
        instance: &'a FlowInstance,
        gatekeeper: bool,
        resume: ResumePoint,
    ) -> Self {
        let state = resume.state.unwrap_or_else(|| FlowState {
            booking: Some(shared.generator.booking(instance.index)),
            ..FlowState::default()
        });
        FlowRunner {
            shared,
            instance,
            cx: StepContext {
                shared,
                instance,
                state,
                caller: Caller {
                    shared,
                    flow: &instance.label,
                    gatekeeper,
                },
                resumed_mid_step: resume.mid_step,
                done_in_step: resume.done_in_step,
                lost_in_step: resume.lost_in_step,
                step_name: String::new(),
                step_index: 0,
                writes_in_step: 0,
            },
            die_before_step_line: die_before_step_line(&instance.label),
        }
    }

    fn record_step(
        &self,
        index: usize,
        status: StepStatus,
        reason: Option<String>,
        started: Started,
    ) {
        self.shared.events.emit(RunEvent::StepFinished(StepEvent {
            flow: self.instance.label.clone(),
            step_index: index,
            step: self.instance.steps[index].name(),
            status,
            reason,
            started_at: started.at,
            duration_ms: started.clock.elapsed().as_millis() as u64,
            state: (status == StepStatus::Passed)
                .then(|| serde_json::to_value(&self.cx.state).unwrap_or_default()),
        }));
    }

    fn skip_rest(&self, from: usize, reason: &str) {
        for index in from..self.instance.steps.len() {
            self.record_step(
                index,
                StepStatus::Skipped,
                Some(reason.to_string()),
                Started::now(),
            );
        }
    }

    /// Runs the steps from `start`; a failed step skips the rest, naming why.
    pub(crate) async fn run(mut self, start: usize) -> FlowResult {
        // Failpoint for the test that a panicking flow fails the run (hidden, tests only).
        if crate::env::failpoint("PPCERT_TEST_PANIC_IN_FLOW")
            .is_some_and(|label| label == self.instance.label.as_str())
        {
            panic!(
                "failpoint PPCERT_TEST_PANIC_IN_FLOW in {}",
                self.instance.label
            );
        }
        let steps = self.instance.steps.clone();
        let mut outcome = (FlowStatus::Completed, None);
        for (index, step) in steps.iter().enumerate().skip(start) {
            if let Some((status, why)) = self.run_step(index, step).await {
                outcome = (status, Some(why));
                break;
            }
        }
        if self.cx.caller.gatekeeper {
            // A flow that made no call of its own (all resumed) must not hold the others back.
            self.shared.gate.settle(super::gate::GateState::Open);
        }
        let (status, reason) = outcome;
        self.done(status, reason, steps.len())
    }

    /// Runs one step and records it; returns how the flow ends if it cannot go on.
    async fn run_step(&mut self, index: usize, step: &Step) -> Option<(FlowStatus, String)> {
        if self.shared.cancel.is_cancelled() {
            self.skip_rest(index, "interrupted before this step");
            return Some((FlowStatus::Interrupted, "interrupted".to_string()));
        }
        if self.shared.gate.state() == super::gate::GateState::TokenRejected {
            let why = "not run: the token keeps being rejected".to_string();
            self.skip_rest(index, &why);
            return Some((FlowStatus::NotRun, why));
        }
        // Nothing goes before the first call has shown the token works and the target answers:
        // a bad token or a dead target costs one request, not one per slot.
        let early = self.instance.early
            && index == 0
            && self.shared.gate.state() == super::gate::GateState::Pending;
        if !self.cx.caller.gatekeeper && !early && !self.shared.gate.wait_open().await {
            let why = format!("not run: the first call got {}", self.shared.gate.state());
            self.skip_rest(index, &why);
            return Some((FlowStatus::NotRun, why));
        }
        let started = Started::now();
        self.shared.events.emit(RunEvent::StepStarted {
            flow: self.instance.label.clone(),
            step_index: index,
        });
        self.cx.step_index = index;
        self.cx.writes_in_step = 0;
        let result = self.step(step).await;
        self.cx.resumed_mid_step = false;
        self.cx.done_in_step.clear();
        self.cx.lost_in_step.clear();
        let reason = match result {
            Ok(()) => {
                if self.die_before_step_line == Some(index) {
                    std::process::abort();
                }
                self.record_step(index, StepStatus::Passed, None, started);
                return None;
            }
            Err(reason) => reason.to_string(),
        };
        let interrupted = self.shared.cancel.is_cancelled();
        // A step Ctrl-C cut short did not fail: it is left undone (skipped), so `--resume`
        // finishes it from what its journaled exchanges already got done, a write answered
        // and under confirmation included, instead of sending that write again.
        let (status, reason) = match interrupted {
            true => (StepStatus::Skipped, format!("interrupted: {reason}")),
            false => (StepStatus::Failed, reason),
        };
        self.record_step(index, status, Some(reason.clone()), started);
        let ended = if interrupted {
            "was interrupted"
        } else {
            "failed"
        };
        let why = format!("step {} (`{}`) {ended}", index + 1, step.name());
        self.skip_rest(index + 1, &why);
        let status = if interrupted {
            FlowStatus::Interrupted
        } else {
            FlowStatus::Failed
        };
        Some((status, format!("{why}: {reason}")))
    }

    /// Tells the observers the flow is done and hands back what it made.
    fn done(self, status: FlowStatus, reason: Option<String>, steps: usize) -> FlowResult {
        let shown = match status {
            FlowStatus::Completed => StepStatus::Passed,
            FlowStatus::Failed => StepStatus::Failed,
            _ => StepStatus::Skipped,
        };
        self.shared.events.emit(RunEvent::FlowFinished {
            label: self.instance.label.clone(),
            status: shown,
            steps,
            reason: reason.clone(),
        });
        FlowResult {
            label: self.instance.label.clone(),
            flow: self.instance.flow.clone(),
            state: self.cx.state,
            status,
            reason,
        }
    }

    async fn step(&mut self, step: &Step) -> Result<(), StepError> {
        let cx = &mut self.cx;
        cx.step_name = step.name();
        match step {
            Step::Quote => steps::quote(cx).await,
            Step::Subscribe => steps::subscribe(cx).await,
            Step::Update { mutation } => steps::update(cx, *mutation).await,
            Step::ReadContracts { when_unknown } => steps::read_contracts(cx, *when_unknown).await,
            Step::Claim { product_type } => claims::claim(cx, *product_type).await,
            Step::DeleteQuote => steps::delete_quote(cx).await,
            Step::ReportFlightCancellation => steps::report_flight_cancellation(cx).await,
            Step::AwaitClaimStatus {
                status,
                timeout_secs,
                interval_ms,
            } => claims::await_claim_status(cx, status, *timeout_secs, *interval_ms).await,
            Step::ExpectError { case, status } => {
                negative::expect_error(cx, *case, status.clone()).await
            }
        }
    }
}

fn die_before_step_line(label: &str) -> Option<usize> {
    let at = crate::env::failpoint("PPCERT_TEST_DIE_BEFORE_STEP_LINE")?;
    let (flow, index) = at.to_str()?.rsplit_once(':')?;
    (flow == label).then(|| index.parse().ok()).flatten()
}

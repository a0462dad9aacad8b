//! The scenario engine: expands flows into instances, runs them concurrently (up to the
//! concurrency limit, behind the gate of the first call), and records every exchange.

mod caller;
pub(crate) mod cancel;
mod claims;
pub(crate) mod events;
pub(crate) mod flow;
pub(crate) mod gate;
pub mod http;
mod negative;
mod resume;
mod shared;
pub(crate) mod single_call;
pub(crate) mod state;
mod step;
mod steps;
pub(crate) mod token;

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::FutureExt;
use std::panic::AssertUnwindSafe;
use tokio::sync::Semaphore;

use crate::record::{FlowResult, FlowState, FlowStatus};
use crate::scenario::Scenario;
pub(crate) use cancel::Cancel;
pub(crate) use claims::claim_day;
pub(crate) use events::{EventStream, RunEvent, Subscriber};
pub(crate) use gate::{Gate, GateState};
pub(crate) use http::ApiClient;
pub(crate) use resume::{open_lost_calls, resume_points};
pub(crate) use shared::Shared;
pub(crate) use state::{FlowInstance, ResumePoint};
pub(crate) use token::Tokens;

/// Flows besides the first whose first request may go while the first call is unanswered.
/// A bad token or a dead target therefore costs at most `1 + EARLY_FLOWS` requests; in
/// exchange the longest chains start at once instead of one round trip late, which was most
/// of the gap between a run and its critical path.
pub const EARLY_FLOWS: usize = 4;

/// The requests a flow's steps send at the least (a polling step once), for ranking flows by
/// how long their dependency chain is.
fn chain_length(steps: &[crate::scenario::Step]) -> usize {
    steps.iter().map(|s| s.operations().len()).sum()
}

/// Whether a flow opens with a single quote (one flight plan): only that may go early, a
/// request that creates nothing a bad token could harm, and one, so the bound above counts
/// requests, not steps.
fn opens_with_one_request(steps: &[crate::scenario::Step], flight_plans: u32) -> bool {
    matches!(steps.first(), Some(crate::scenario::Step::Quote)) && flight_plans <= 1
}

/// The flow instances of a scenario, in order: flow by flow, repeat by repeat.
pub(crate) fn plan(
    scenario: &Scenario,
    flight_seller: bool,
    scale: std::num::NonZeroU32,
) -> Vec<FlowInstance> {
    let mut instances = Vec::new();
    for flow in scenario
        .flows
        .iter()
        .filter(|f| flight_seller || !f.flight_sellers_only)
    {
        for ordinal in 0..flow.repeat.saturating_mul(scale.get()) {
            instances.push(FlowInstance {
                label: format!("{}#{}", flow.name, ordinal + 1),
                flow: flow.name.clone(),
                ordinal,
                index: instances.len() as u64,
                steps: flow.steps.clone(),
                early: false,
            });
        }
    }
    mark_early(&mut instances, scenario.data.flight_plans);
    instances
}

/// The longest flows after the first, up to [`EARLY_FLOWS`], in plan order.
fn mark_early(instances: &mut [FlowInstance], flight_plans: u32) {
    let longest = instances
        .iter()
        .map(|i| chain_length(&i.steps))
        .max()
        .unwrap_or(0);
    instances
        .iter_mut()
        .skip(1)
        .filter(|i| {
            chain_length(&i.steps) == longest && opens_with_one_request(&i.steps, flight_plans)
        })
        .take(EARLY_FLOWS)
        .for_each(|i| i.early = true);
}

/// Runs every instance, starting them in plan order as permits free up. The first one not yet
/// finished settles the gate with its first call; the others may send a leading quote (harmless)
/// meanwhile, but nothing else until the gate opens. Results come back in plan order.
pub(crate) async fn execute(
    shared: Arc<Shared>,
    instances: Vec<FlowInstance>,
    mut resume: HashMap<String, ResumePoint>,
) -> Vec<FlowResult> {
    let permits = Arc::new(Semaphore::new(shared.concurrency.get()));
    let mut gatekeeper_started = false;
    let mut spawned = 0usize;
    let mut finished: Vec<(usize, FlowResult)> = Vec::new();
    let mut tasks = tokio::task::JoinSet::new();
    for (position, instance) in instances.into_iter().enumerate() {
        let point = resume.remove(&instance.label).unwrap_or_default();
        if point.next_step >= instance.steps.len() {
            finished.push((position, completed(&instance, point)));
            continue;
        }
        let permit = permits
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let gatekeeper = !gatekeeper_started;
        // At most one slot's worth of flows starts before the gate settles; a flow started after
        // it closed would only repeat the first call's failure.
        let settled_open = spawned < shared.concurrency.get() || shared.gate.wait_open().await;
        if let Some((status, reason)) = not_started(&shared, settled_open) {
            let result = not_run(&shared, &instance, point, status, &reason);
            finished.push((position, result));
            continue;
        }
        gatekeeper_started = true;
        spawned += 1;
        let shared = shared.clone();
        tasks.spawn(async move {
            let _permit = permit;
            let start = point.next_step;
            let runner = flow::FlowRunner::new(&shared, &instance, gatekeeper, point);
            // A panic is caught here, inside the task, so that the gate it may hold opens
            // before the next flow waits on it, and the flow is recorded as failed.
            let result = match AssertUnwindSafe(runner.run(start)).catch_unwind().await {
                Ok(result) => result,
                Err(panic) => crashed(&shared, &instance, panic),
            };
            (position, result.settled())
        });
        // A finished task holds its whole future until joined: reaped as the run goes, a
        // scale-1000 run keeps a slot's worth, not twelve thousand of them (64 MB).
        while let Some(joined) = tasks.try_join_next() {
            finished.push(joined_result(joined));
        }
    }
    if !gatekeeper_started {
        shared.gate.settle(GateState::Open);
    }
    finished.extend(tasks.join_all().await);
    finished.sort_by_key(|(position, _)| *position);
    finished.into_iter().map(|(_, result)| result).collect()
}

/// A flow's result from its task; its panics are caught inside it, so a join error is a bug
/// and goes on as the panic it was.
fn joined_result(
    joined: Result<(usize, FlowResult), tokio::task::JoinError>,
) -> (usize, FlowResult) {
    match joined {
        Ok(done) => done,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    }
}

/// Why a flow must not start now: the gate closed on the first call, or the run was cancelled.
fn not_started(shared: &Shared, settled_open: bool) -> Option<(FlowStatus, String)> {
    let state = shared.gate.state();
    if !settled_open || !matches!(state, GateState::Pending | GateState::Open) {
        Some((
            FlowStatus::NotRun,
            format!("not started: the first call got {state}"),
        ))
    } else if shared.cancel.is_cancelled() {
        Some((
            FlowStatus::Interrupted,
            "interrupted before it started".into(),
        ))
    } else {
        None
    }
}

/// A flow that panicked: a failed flow carrying the panic's message, never a silent gap in
/// the results (a gap made a scenario without requirements pass).
fn crashed(
    shared: &Shared,
    instance: &FlowInstance,
    panic: Box<dyn std::any::Any + Send>,
) -> FlowResult {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    let message = format!("ppcert failed inside this flow (a bug; please report it): {text}");
    crate::console::tell!("error: {}: {message}", instance.label);
    shared.gate.settle(GateState::Open);
    FlowResult {
        label: instance.label.clone(),
        flow: instance.flow.clone(),
        state: FlowState::default(),
        status: FlowStatus::Failed,
        reason: Some(message),
    }
}

fn completed(instance: &FlowInstance, point: ResumePoint) -> FlowResult {
    FlowResult {
        label: instance.label.clone(),
        flow: instance.flow.clone(),
        state: point.state.unwrap_or_default(),
        status: FlowStatus::Completed,
        reason: None,
    }
}

fn not_run(
    shared: &Shared,
    instance: &FlowInstance,
    point: ResumePoint,
    status: FlowStatus,
    reason: &str,
) -> FlowResult {
    FlowResult {
        label: instance.label.clone(),
        flow: instance.flow.clone(),
        state: point.state.unwrap_or_else(|| FlowState {
            booking: Some(shared.generator.booking(instance.index)),
            ..FlowState::default()
        }),
        status,
        reason: Some(reason.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn early(scenario: &crate::scenario::Scenario) -> Vec<String> {
        let one = std::num::NonZeroU32::new(1).unwrap();
        (plan(scenario, true, one).into_iter())
            .filter(|i| i.early)
            .map(|i| i.label)
            .collect()
    }

    #[test]
    fn the_longest_flows_after_the_first_go_early_and_no_more_than_the_bound() {
        let mut certification = crate::scenario::builtin_named("certification")
            .unwrap()
            .scenario;
        let expected: Vec<String> = (2..=5).map(|n| format!("lifecycle#{n}")).collect();
        assert_eq!(early(&certification), expected);
        assert_eq!(expected.len(), EARLY_FLOWS);
        // A flow opening with several quotes (one per flight plan) would break the bound.
        certification.data.flight_plans = 2;
        assert!(early(&certification).is_empty());
    }
}

//! The scenario engine: expands flows into instances, runs them concurrently (up to the
//! concurrency limit, behind the gate of the first call), and records every exchange.

mod call;
pub mod cancel;
pub mod client;
pub mod endpoints;
pub mod flow;
pub mod gate;
mod negative;
pub mod recorder;
mod steps;
pub mod tolerant;

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::config::Environment;
use crate::datagen::Generator;
use crate::record::{StepEvent, StepStatus};
use crate::scenario::Scenario;
pub use cancel::Cancel;
pub use client::ApiClient;
pub use endpoints::Endpoints;
pub use flow::{FlowInstance, FlowResult, FlowState, FlowStatus, ResumePoint};
pub use gate::{Gate, GateState};
pub use recorder::{Event, Recorder};

/// What every flow of a run shares.
pub struct Shared {
    pub client: ApiClient,
    pub endpoints: Endpoints,
    pub generator: Generator,
    pub environment: Environment,
    pub recorder: Arc<Recorder>,
    pub cancel: Cancel,
    pub gate: Gate,
    pub concurrency: usize,
}

/// The flow instances of a scenario, in order: flow by flow, repeat by repeat.
pub fn plan(scenario: &Scenario, flight_seller: bool, scale: u32) -> Vec<FlowInstance> {
    let mut instances = Vec::new();
    for flow in scenario
        .flows
        .iter()
        .filter(|f| flight_seller || !f.flight_sellers_only)
    {
        for ordinal in 0..flow.repeat.saturating_mul(scale) {
            instances.push(FlowInstance {
                label: format!("{}#{}", flow.name, ordinal + 1),
                flow: flow.name.clone(),
                ordinal,
                index: instances.len() as u64,
                steps: flow.steps.clone(),
            });
        }
    }
    instances
}

/// Where each flow of an interrupted run picks up, from its journal.
pub fn resume_points(
    instances: &[FlowInstance],
    started: &[(String, usize)],
    steps: &[StepEvent],
) -> HashMap<String, ResumePoint> {
    let mut points = HashMap::new();
    for instance in instances {
        let mut point = ResumePoint::default();
        for event in steps.iter().filter(|e| e.flow == instance.label) {
            if event.status == StepStatus::Passed && event.step_index == point.next_step {
                point.next_step += 1;
                point.state = event
                    .state
                    .clone()
                    .and_then(|s| serde_json::from_value(s).ok());
            }
        }
        if point.next_step > 0 && point.state.is_none() {
            point = ResumePoint::default();
        }
        point.mid_step = started
            .iter()
            .any(|(flow, index)| *flow == instance.label && *index == point.next_step);
        points.insert(instance.label.clone(), point);
    }
    points
}

/// Runs every instance; the first one not yet finished goes alone until its first call settles
/// the gate. Results come back in plan order.
pub async fn execute(
    shared: Arc<Shared>,
    instances: Vec<FlowInstance>,
    mut resume: HashMap<String, ResumePoint>,
) -> Vec<FlowResult> {
    let permits = Arc::new(Semaphore::new(shared.concurrency.max(1)));
    let gatekeeper = instances.iter().position(|i| {
        resume
            .get(&i.label)
            .is_none_or(|p| p.next_step < i.steps.len())
    });
    if gatekeeper.is_none() {
        shared.gate.settle(GateState::Open);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (position, instance) in instances.into_iter().enumerate() {
        let shared = shared.clone();
        let permits = permits.clone();
        let point = resume.remove(&instance.label).unwrap_or_default();
        let is_gatekeeper = gatekeeper == Some(position);
        tasks.spawn(async move {
            let result = run_instance(&shared, &instance, is_gatekeeper, point, &permits).await;
            (position, result)
        });
    }
    let mut results: Vec<(usize, FlowResult)> = tasks.join_all().await;
    results.sort_by_key(|(position, _)| *position);
    results.into_iter().map(|(_, result)| result).collect()
}

async fn run_instance(
    shared: &Arc<Shared>,
    instance: &FlowInstance,
    gatekeeper: bool,
    point: ResumePoint,
    permits: &Semaphore,
) -> FlowResult {
    let not_run = |reason: &str, state: Option<FlowState>| FlowResult {
        label: instance.label.clone(),
        flow: instance.flow.clone(),
        state: state.unwrap_or_else(|| FlowState {
            booking: Some(shared.generator.booking(instance.index)),
            ..FlowState::default()
        }),
        status: FlowStatus::NotRun,
        reason: Some(reason.to_string()),
    };
    if point.next_step >= instance.steps.len() {
        let state = point.state.unwrap_or_default();
        return FlowResult {
            label: instance.label.clone(),
            flow: instance.flow.clone(),
            state,
            status: FlowStatus::Completed,
            reason: None,
        };
    }
    if !gatekeeper && !shared.gate.wait_open().await {
        return not_run(
            &format!("not started: first call ended in {:?}", shared.gate.state()),
            point.state,
        );
    }
    let Ok(_permit) = permits.acquire().await else {
        return not_run("not started", point.state);
    };
    if shared.cancel.is_cancelled() {
        return FlowResult {
            status: FlowStatus::Interrupted,
            ..not_run("interrupted before it started", point.state)
        };
    }
    let start = point.next_step;
    flow::FlowRunner::new(shared, instance, gatekeeper, point)
        .run(start)
        .await
}

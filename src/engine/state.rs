//! What a flow is to the engine: its instance in the plan and where a resumed one picks up.
//! The state it carries and how it ended are saved records (`crate::record::flow`).
//! A leaf of the engine: the runner and the steps both use it, it uses neither.

use crate::record::FlowState;
use crate::scenario::Step;

/// One run of one flow: `lifecycle#3` is the third repeat of flow `lifecycle`.
#[derive(Debug, Clone)]
pub(crate) struct FlowInstance {
    pub label: String,
    pub flow: String,
    pub ordinal: u32,
    /// Global booking index, unique within the run.
    pub index: u64,
    pub steps: Vec<Step>,
    /// One of the run's longest flows, allowed to send its first request while the gate is
    /// still pending (see [`EARLY_FLOWS`](super::EARLY_FLOWS)).
    pub early: bool,
}

/// Where a resumed flow picks up.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResumePoint {
    pub next_step: usize,
    pub state: Option<FlowState>,
    /// The next step had started (its exchanges are in the journal) but not finished.
    pub mid_step: bool,
    /// The counted exchanges that interrupted step already made.
    pub done_in_step: Vec<crate::record::Exchange>,
    /// The next step's writes whose answer an earlier run lost and that nothing settled
    /// since, with the last attempt number of each: the step's redo numbers on from it.
    pub lost_in_step: Vec<(crate::models::Operation, u32)>,
}

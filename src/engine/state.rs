//! What a flow is and carries: its instance in the plan, the state its steps hand each other
//! (saved after every step for `--resume`), how it ended, and where a resumed one picks up.
//! A leaf of the engine: the runner and the steps both use it, it uses neither.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::datagen::{Booking, Mutation};
use crate::models::ProductType;
use crate::scenario::Step;
use crate::timestamp::Timestamp;

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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct QuoteRef {
    pub id: String,
    pub reference: String,
    /// The bundle read from a multi-bundle quote answer (`[partner] bundle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// The T&C links that answer offered for the bundle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<super::bundles::TermsLink>,
}

/// What a flow's steps hand each other; saved after every step so `--resume` can continue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct FlowState {
    pub booking: Option<Booking>,
    /// Quotes made and not yet used by a subscription or update.
    pub open_quotes: Vec<QuoteRef>,
    /// Quotes the booking's contract currently rests on.
    pub quotes: Vec<QuoteRef>,
    /// Every quote this flow made, for the evidence.
    pub made_quotes: Vec<QuoteRef>,
    pub subscribed_at: Option<Timestamp>,
    /// Contract id by product type.
    pub contracts: BTreeMap<ProductType, String>,
    /// (product type, contract id) of the claim made.
    pub claimed: Option<(ProductType, String)>,
    pub claim_status: Option<crate::models::ClaimStatus>,
    pub price_delta: Option<f64>,
    pub mutation: Option<Mutation>,
    /// Every value the flow's answers gave so far, by name: what templates read as
    /// `captured.NAME`, kept for the rest of the flow instance (and across `--resume`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub captured: BTreeMap<String, CapturedValue>,
}

/// A value an answer gave: the value, the step whose call read it, and where in the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CapturedValue {
    pub value: serde_json::Value,
    /// `4:read_contracts`: the step's place in its flow (from 1) and its name.
    pub step: String,
    pub from: String,
}

impl FlowState {
    /// `captured` as templates see it: NAME → value.
    pub(crate) fn captured_values(&self) -> serde_json::Value {
        serde_json::Value::Object(
            (self.captured.iter())
                .map(|(name, c)| (name.clone(), c.value.clone()))
                .collect(),
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FlowStatus {
    Completed,
    Failed,
    Interrupted,
    NotRun,
}

#[derive(Debug, Clone)]
pub(crate) struct FlowResult {
    pub label: String,
    pub flow: String,
    pub state: FlowState,
    pub status: FlowStatus,
    pub reason: Option<String>,
}

impl FlowResult {
    /// A finished flow as the run keeps it until the evidence is built, which reads its booking
    /// number, the quotes made, the contracts, the claim and the price delta. The generated
    /// trip and the working quote lists go: a scale-1000 run holds thirteen thousand results.
    pub(crate) fn settled(mut self) -> FlowResult {
        let state = &mut self.state;
        if let Some(booking) = state.booking.as_mut() {
            booking.plans = Vec::new();
            booking.product_types = Vec::new();
        }
        state.open_quotes = Vec::new();
        state.quotes = Vec::new();
        state.captured = BTreeMap::new();
        self
    }
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
}

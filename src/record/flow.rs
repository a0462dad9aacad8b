//! A flow's saved record: the state its steps hand each other (saved after every step for
//! `--resume`), the quotes it made, and how it ended. The engine makes them; the journal, the
//! evidence and the reports read them back, so they live here and not in the engine.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::datagen::{Booking, Mutation};
use crate::models::ProductType;
use crate::timestamp::Timestamp;

/// A quote a flow made: the id and reference later steps send, and the bundle it was read from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct QuoteRef {
    pub id: String,
    pub reference: String,
    /// The bundle read from a multi-bundle quote answer (`[partner] bundle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// The T&C links that answer offered for the bundle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<TermsLink>,
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

/// How a flow instance ended, as the journal and the evidence write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FlowStatus {
    Completed,
    Failed,
    Interrupted,
    NotRun,
}

/// A finished flow instance: its state, how it ended and why.
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
            // Of the booking, the evidence reads its number and currency only.
            let client = &mut booking.client;
            let beneficiary = &mut booking.beneficiary;
            for text in [
                &mut client.email,
                &mut client.firstname,
                &mut client.lastname,
                &mut beneficiary.name,
                &mut beneficiary.iban,
                &mut beneficiary.bic,
                &mut booking.language,
            ] {
                *text = String::new();
            }
        }
        state.open_quotes = Vec::new();
        state.quotes = Vec::new();
        // Grown a quote at a time (room for four at the first): a quote or two are kept.
        state.made_quotes.shrink_to_fit();
        state.captured = BTreeMap::new();
        self
    }
}

/// A T&C link an answer offered for a bundle (`documents[]` of the provider's docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TermsLink {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_type: Option<String>,
}

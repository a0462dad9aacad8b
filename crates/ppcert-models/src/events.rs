//! Webhook events as the provider documents them (webhooks v2): `contract.created` and
//! `claim.updated`, each in an `{"event": ..., "data": {"contract" | "claim": ...}}` envelope.
//! The sandbox sends them, `ppcert webhook send` forges them, receivers read them back.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::api::{Client, Money, Traveler};

pub const CONTRACT_CREATED: &str = "contract.created";
pub const CLAIM_UPDATED: &str = "claim.updated";

/// The subscription a contract belongs to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFacts {
    pub id: String,
    pub booking_number: String,
    pub customer: Client,
    pub subscribed_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Product {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
}

/// A contract as the docs list its fields.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ContractFacts {
    pub id: String,
    pub created_at: String,
    pub covered_event: Value,
    pub subscription: SubscriptionFacts,
    pub travelers: Vec<Traveler>,
    pub product: Product,
}

/// A claim as the docs list its fields, with its contract.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ClaimFacts {
    pub id: String,
    pub status: String,
    pub claimed_at: String,
    pub compensation: Money,
    pub contract: ContractFacts,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    ContractCreated(ContractFacts),
    ClaimUpdated(ClaimFacts),
}

impl Event {
    pub fn name(&self) -> &'static str {
        match self {
            Event::ContractCreated(_) => CONTRACT_CREATED,
            Event::ClaimUpdated(_) => CLAIM_UPDATED,
        }
    }

    pub fn booking_number(&self) -> &str {
        match self {
            Event::ContractCreated(contract) => &contract.subscription.booking_number,
            Event::ClaimUpdated(claim) => &claim.contract.subscription.booking_number,
        }
    }

    /// The claim's status, for a `claim.updated`.
    pub fn claim_status(&self) -> Option<&str> {
        match self {
            Event::ContractCreated(_) => None,
            Event::ClaimUpdated(claim) => Some(&claim.status),
        }
    }

    /// The documented envelope.
    pub fn to_json(&self) -> Value {
        match self {
            Event::ContractCreated(contract) => {
                json!({"event": CONTRACT_CREATED, "data": {"contract": contract}})
            }
            Event::ClaimUpdated(claim) => {
                json!({"event": CLAIM_UPDATED, "data": {"claim": claim}})
            }
        }
    }
}

/// What a receiver can tell from any delivered body, documented event or not.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub event: Option<String>,
    pub booking_number: Option<String>,
    pub claim_id: Option<String>,
    pub claim_status: Option<String>,
}

impl Summary {
    pub fn of(body: &Value) -> Summary {
        let data = &body["data"];
        let claim = &data["claim"];
        let text = |v: &Value| v.as_str().map(str::to_string);
        Summary {
            event: text(&body["event"]),
            booking_number: [
                &data["contract"]["subscription"]["bookingNumber"],
                &claim["contract"]["subscription"]["bookingNumber"],
                &data["bookingNumber"],
            ]
            .into_iter()
            .find_map(text),
            claim_id: text(&claim["id"]),
            claim_status: text(&claim["status"]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receiver_reads_back_what_the_sender_wrote() {
        let contract = ContractFacts {
            id: "ct_1".into(),
            created_at: "2027-01-01T10:00:00+00:00".into(),
            covered_event: json!({"type": "TRIP"}),
            subscription: SubscriptionFacts {
                id: "sub_BN1".into(),
                booking_number: "BN1".into(),
                customer: Client {
                    email: "ada@example.com".into(),
                    firstname: "Ada".into(),
                    lastname: "Lovelace".into(),
                },
                subscribed_at: "2027-01-01T10:00:00+00:00".into(),
            },
            travelers: vec![],
            product: Product {
                name: "Withdrawal".into(),
                kind: "WITHDRAWAL".into(),
            },
        };
        let claim = Event::ClaimUpdated(ClaimFacts {
            id: "cl_1".into(),
            status: "ACCEPTED".into(),
            claimed_at: "2027-01-02T10:00:00+00:00".into(),
            compensation: Money {
                amount: 10.0,
                currency: "EUR".into(),
            },
            contract,
        });
        let summary = Summary::of(&claim.to_json());
        assert_eq!(summary.event.as_deref(), Some(CLAIM_UPDATED));
        assert_eq!(summary.booking_number.as_deref(), Some("BN1"));
        assert_eq!(summary.claim_status.as_deref(), Some("ACCEPTED"));
        assert_eq!(summary.claim_id.as_deref(), Some("cl_1"));
    }
}

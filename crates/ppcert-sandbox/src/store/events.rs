//! The webhook events the store's changes cause: `contract.created` for each new contract and
//! `claim.updated` for each status a claim takes, scheduled when it will take it. Collected only
//! when webhooks are on, so a sandbox without them holds nothing extra.

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::model::{Claim, Rules, Scheduled, Store};
use crate::models::events::{ClaimFacts, ContractFacts, Event, Product, SubscriptionFacts};
use crate::models::{CHANGE_FOR_ANY_REASON, Money};

/// Every status a claim takes, with when (after its creation): flagged claims wait for a
/// person; without bank details a claim stays ACCEPTED; with them it moves ACCEPTED →
/// REFUNDABLE → REFUNDED, one step per `claim_step`.
pub(super) fn claim_timeline(claim: &Claim, rules: Rules) -> Vec<(Duration, &'static str)> {
    if claim.flagged {
        return vec![(Duration::zero(), "MANUAL_VERIFICATION_NEEDED")];
    }
    if !claim.bank_details {
        return vec![(Duration::zero(), "ACCEPTED")];
    }
    if rules.claim_step <= Duration::zero() {
        return vec![(Duration::zero(), "REFUNDED")];
    }
    vec![
        (Duration::zero(), "ACCEPTED"),
        (rules.claim_step, "REFUNDABLE"),
        (rules.claim_step * 2, "REFUNDED"),
    ]
}

fn product_name(kind: &str) -> &'static str {
    if kind == CHANGE_FOR_ANY_REASON {
        "Change for any reason"
    } else {
        "Withdrawal"
    }
}

impl Store {
    /// Turns event collection on (for a sandbox that sends webhooks).
    pub fn with_events(mut self, on: bool) -> Self {
        self.events = on.then(Vec::new);
        self
    }

    /// The events caused since the last call, to hand to the sender.
    pub fn take_events(&mut self) -> Vec<Scheduled> {
        self.events.as_mut().map(std::mem::take).unwrap_or_default()
    }

    fn contract_facts(&self, contract_id: &str) -> Option<ContractFacts> {
        let contract = self.contracts.get(contract_id)?;
        let booking = self.bookings.get(&contract.booking_number)?;
        Some(ContractFacts {
            id: contract_id.to_string(),
            created_at: contract.created_at.to_rfc3339(),
            covered_event: json!({
                "type": "TRIP",
                "startsAt": booking.first_departure.to_rfc3339(),
                "flights": booking.flights,
            }),
            subscription: SubscriptionFacts {
                id: format!("sub_{}", contract.booking_number),
                booking_number: contract.booking_number.clone(),
                customer: booking.client.clone(),
                subscribed_at: booking.created_at.to_rfc3339(),
            },
            travelers: booking.travelers.clone(),
            product: Product {
                name: product_name(&contract.product_type).into(),
                kind: contract.product_type.clone(),
            },
        })
    }

    pub(super) fn announce_contracts(&mut self, contract_ids: &[String]) {
        if self.events.is_none() {
            return;
        }
        let facts: Vec<ContractFacts> = contract_ids
            .iter()
            .filter_map(|id| self.contract_facts(id))
            .collect();
        if let Some(events) = self.events.as_mut() {
            events.extend(facts.into_iter().map(|contract| Scheduled {
                after: Duration::zero(),
                event: Event::ContractCreated(contract),
            }));
        }
    }

    pub(super) fn announce_claim(&mut self, contract_id: &str, claim: &Claim, rules: Rules) {
        if self.events.is_none() {
            return;
        }
        let Some(contract) = self.contract_facts(contract_id) else {
            return;
        };
        let booking = &self.bookings[&contract.subscription.booking_number];
        let compensation = Money {
            amount: claim.modification_cost.unwrap_or(booking.price),
            currency: booking.currency.clone(),
        };
        let claimed_at: DateTime<Utc> = claim.claim_date.unwrap_or(claim.created_at);
        let scheduled = claim_timeline(claim, rules)
            .into_iter()
            .map(|(after, status)| Scheduled {
                after,
                event: Event::ClaimUpdated(ClaimFacts {
                    id: claim.id.clone(),
                    status: status.into(),
                    claimed_at: claimed_at.to_rfc3339(),
                    compensation: compensation.clone(),
                    contract: contract.clone(),
                }),
            })
            .collect::<Vec<_>>();
        if let Some(events) = self.events.as_mut() {
            events.extend(scheduled);
        }
    }
}

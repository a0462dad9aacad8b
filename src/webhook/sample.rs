//! Sample events for grading a receiver: a documented contract and its claim, each field in
//! the shape the provider's docs list, with fixed values so a receiver's log is easy to read.

use serde_json::json;

use crate::models::events::{ClaimFacts, ContractFacts, Event, Product, SubscriptionFacts};
use crate::models::{Client, Money, Traveler, WITHDRAWAL};

/// The booking number every sample event names.
pub(crate) const SAMPLE_BOOKING: &str = "PPCERT-WEBHOOK-TEST";

pub(crate) fn contract() -> ContractFacts {
    ContractFacts {
        id: "ct_ppcert_webhook_test".into(),
        created_at: "2027-03-01T09:30:00+00:00".into(),
        covered_event: json!({"type": "TRIP", "startsAt": "2027-04-10T07:15:00+02:00"}),
        subscription: SubscriptionFacts {
            id: format!("sub_{SAMPLE_BOOKING}"),
            booking_number: SAMPLE_BOOKING.into(),
            customer: Client {
                email: "ana.lopez@example.com".into(),
                firstname: "Ana".into(),
                lastname: "Lopez".into(),
            },
            subscribed_at: "2027-03-01T09:30:00+00:00".into(),
        },
        travelers: vec![Traveler {
            age_range: "ADULT".into(),
            birthdate: "1984-05-12".into(),
            first_name: "Ana".into(),
            last_name: "Lopez".into(),
        }],
        product: Product {
            name: "Withdrawal".into(),
            kind: WITHDRAWAL.into(),
        },
    }
}

pub(crate) fn contract_created() -> Event {
    Event::ContractCreated(contract())
}

pub(crate) fn claim_updated(status: &str) -> Event {
    Event::ClaimUpdated(ClaimFacts {
        id: "cl_ppcert_webhook_test".into(),
        status: status.into(),
        claimed_at: "2027-03-03T11:00:00+00:00".into(),
        compensation: Money {
            amount: 184.5,
            currency: "EUR".into(),
        },
        contract: contract(),
    })
}

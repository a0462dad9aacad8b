//! The sandbox's in-memory state and business rules: pricing, conflicts and contracts.
//! The state is in [`model`], quotes in [`quotes`], subscriptions and updates in [`bookings`],
//! claims and flight-cancellation reports in [`claims`].

mod bookings;
mod claims;
mod events;
mod expiry;
mod held;
mod model;
mod quotes;
mod retention;

pub use expiry::QUOTE_VALIDITY_HOURS;
pub use held::Held;
pub use model::{
    DEFAULT_MAX_BOOKINGS, DEFAULT_MAX_OPEN_QUOTES, FRAUD_WINDOW_HOURS, QuoteCreated, Rules,
    Scheduled, Store,
};
pub use quotes::PRODUCT_RATE;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::models::Operation;
use crate::validate::Checked;
use claims::claim_json;
use model::not_found;

impl Store {
    /// How many subscribed quotes were of each bundle: which reference the partner chose.
    pub fn subscribed_bundles(&self) -> BTreeMap<String, u64> {
        self.subscribed_bundles.clone()
    }

    /// Successful operations per kind, as the provider's ledger would count them.
    pub fn counts(&self) -> BTreeMap<Operation, u64> {
        self.counts.clone()
    }

    pub fn contract_exists(&self, id: &str) -> Checked<()> {
        if self.contracts.contains_key(id) {
            Ok(())
        } else {
            Err(not_found(format!("no contract with id `{id}`")))
        }
    }

    /// The booking's contracts with their claims, as `(productType, contract)` pairs.
    pub fn contracts_of(
        &mut self,
        bn: &str,
        now: DateTime<Utc>,
        rules: Rules,
    ) -> Checked<Vec<(String, Value)>> {
        let booking = self
            .bookings
            .get(bn)
            .ok_or_else(|| not_found(format!("no contract for booking number `{bn}`")))?;
        let valid = booking.first_departure > now;
        let contracts = booking
            .contract_ids
            .iter()
            .map(|id| {
                let contract = &self.contracts[id];
                let mut value = json!({
                    "id": id,
                    "productType": contract.product_type,
                    "bookingNumber": bn,
                    "status": if valid { "VALID" } else { "EXPIRED" },
                    "price": {"amount": booking.price, "currency": booking.currency},
                });
                if let Some(claim) = &contract.claim {
                    value["claim"] = claim_json(claim, id, now, rules);
                }
                (contract.product_type.clone(), value)
            })
            .collect();
        self.count(Operation::ReadContracts);
        Ok(contracts)
    }
}

impl Store {
    /// The booking's `ETag`: a strong validator that changes with every update.
    pub fn etag(&self, bn: &str) -> Option<String> {
        let booking = self.bookings.get(bn)?;
        Some(format!("\"{bn}.v{}\"", booking.version))
    }

    /// When the booking was subscribed (its contracts' age), if it is known.
    pub fn subscribed_at(&self, bn: &str) -> Option<DateTime<Utc>> {
        self.bookings.get(bn).map(|b| b.created_at)
    }
}

//! The sandbox's in-memory state and business rules: pricing, conflicts and contracts.
//! Quotes are in [`quotes`], subscriptions and updates in [`bookings`], claims and
//! flight-cancellation reports in [`claims`].

mod bookings;
mod claims;
mod events;
mod expiry;
mod quotes;
mod retention;

pub use events::Scheduled;
pub use expiry::{DEFAULT_MAX_OPEN_QUOTES, QUOTE_VALIDITY_HOURS};
pub use quotes::PRODUCT_RATE;
pub use retention::DEFAULT_MAX_BOOKINGS;

use std::collections::{BTreeMap, HashMap, HashSet};

use axum::http::StatusCode;
use chrono::{DateTime, Duration, FixedOffset, Utc};
use serde_json::{Value, json};

use super::validate::{ApiFailure, Checked};
use crate::models::{Client, Flight, Operation, ProductType, Traveler};
use claims::claim_json;

/// Spec §8.1: a claim sooner than this after the subscription is flagged.
pub const FRAUD_WINDOW_HOURS: i64 = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuoteState {
    Open,
    Used,
    Deleted,
}

#[derive(Debug, Clone)]
struct QuoteRecord {
    currency: String,
    price: f64,
    travelers: usize,
    /// The flights as compact JSON: a long-lived sandbox holds up to `--max-quotes` open
    /// quotes, and one string costs a fraction of six per flight. Read back on subscription.
    flights: Box<str>,
    first_departure: DateTime<FixedOffset>,
    product_types: Box<[ProductType]>,
    booking_number: Option<String>,
    state: QuoteState,
    created_at: DateTime<Utc>,
    /// The bundle this quote prices, when the answer offered one per bundle.
    bundle: Option<Box<str>>,
}

#[derive(Debug, Clone)]
struct Booking {
    created_at: DateTime<Utc>,
    client: Client,
    travelers: Vec<Traveler>,
    quote_ids: Vec<String>,
    price: f64,
    currency: String,
    flights: Vec<Flight>,
    first_departure: DateTime<FixedOffset>,
    contract_ids: Vec<String>,
    /// Changes with every update: what the booking's `ETag` names.
    version: u32,
}

#[derive(Debug, Clone)]
struct Contract {
    booking_number: String,
    created_at: DateTime<Utc>,
    product_type: String,
    claim: Option<Claim>,
}

#[derive(Debug, Clone)]
struct Claim {
    id: String,
    created_at: DateTime<Utc>,
    claim_date: Option<DateTime<Utc>>,
    flagged: bool,
    bank_details: bool,
    modification_cost: Option<f64>,
}

/// Rules the store applies that depend on the sandbox's options.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    pub production: bool,
    /// Time for a claim with bank details to move one status (ACCEPTED → REFUNDABLE → REFUNDED).
    pub claim_step: Duration,
    /// Claims decided after their answer: the answer carries no status, and the contracts
    /// show it once this long has passed since the claim.
    pub claims_decided_after: Option<Duration>,
}

/// What a successful quote returns.
#[derive(Clone)]
pub struct QuoteCreated {
    pub id: String,
    pub reference: String,
    pub price: f64,
    pub currency: String,
    pub product_types: Vec<String>,
    pub booking_number: Option<String>,
    pub price_delta: Option<f64>,
    /// The bundle priced, in a multi-bundle answer.
    pub bundle: Option<String>,
}

#[derive(Default)]
pub struct Store {
    quotes: HashMap<String, QuoteRecord>,
    quote_ids_by_reference: HashMap<String, String>,
    bookings: HashMap<String, Booking>,
    contracts: HashMap<String, Contract>,
    reported_flights: HashSet<(String, usize)>,
    counts: BTreeMap<Operation, u64>,
    next_id: u64,
    id_salt: u32,
    /// Decimal ids (a layout variant): some servers number their objects.
    numeric_ids: bool,
    expiry: expiry::Expiry,
    retention: retention::Retention,
    /// Subscriptions per bundle of the quotes they used (multi-bundle answers only).
    subscribed_bundles: BTreeMap<String, u64>,
    /// Webhook events not yet handed to the sender; `None` when webhooks are off.
    events: Option<Vec<Scheduled>>,
}

impl Store {
    pub fn new(id_salt: u32) -> Self {
        Store {
            id_salt,
            ..Store::default()
        }
    }

    pub fn with_numeric_ids(mut self, numeric_ids: bool) -> Self {
        self.numeric_ids = numeric_ids;
        self
    }

    /// How many subscribed quotes were of each bundle: which reference the partner chose.
    pub fn subscribed_bundles(&self) -> BTreeMap<String, u64> {
        self.subscribed_bundles.clone()
    }

    /// Successful operations per kind, as the provider's ledger would count them.
    pub fn counts(&self) -> BTreeMap<Operation, u64> {
        self.counts.clone()
    }

    fn count(&mut self, op: Operation) {
        *self.counts.entry(op).or_default() += 1;
    }

    fn new_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        self.id_text(prefix, self.next_id)
    }

    /// The id `new_id(prefix)` made when its counter was `n`.
    fn id_text(&self, prefix: &str, n: u64) -> String {
        if self.numeric_ids && prefix != "QR-" {
            return (self.numeric_base() + n).to_string();
        }
        format!("{prefix}{:08x}{:06x}", self.id_salt, n)
    }

    fn numeric_base(&self) -> u64 {
        u64::from(self.id_salt % 9_000 + 1_000) * 1_000_000_000
    }

    /// 404 for an unknown booking; 401 once its contract is no longer valid (departure passed).
    pub fn contracts_exist(&self, bn: &str, now: DateTime<Utc>) -> Checked<()> {
        let booking = self
            .bookings
            .get(bn)
            .ok_or_else(|| not_found(format!("no contract for booking number `{bn}`")))?;
        if booking.first_departure <= now {
            return Err(ApiFailure::new(
                StatusCode::UNAUTHORIZED,
                "CONTRACT_INVALID",
                "the contract is no longer valid: departure has passed",
            ));
        }
        Ok(())
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

fn not_found(message: impl Into<String>) -> ApiFailure {
    ApiFailure::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
}

fn conflict(message: impl Into<String>) -> ApiFailure {
    ApiFailure::new(StatusCode::CONFLICT, "CONFLICT", message)
}

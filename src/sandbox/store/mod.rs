//! The sandbox's in-memory state and business rules: pricing, conflicts and contracts.
//! Claims and flight-cancellation reports are in [`claims`].

mod claims;
mod quotes;

pub use quotes::PRODUCT_RATE;

use std::collections::{BTreeMap, HashMap, HashSet};

use axum::http::StatusCode;
use chrono::{DateTime, Duration, FixedOffset, Utc};
use serde_json::{Value, json};

use super::validate::{self, ApiFailure, Checked, check_client, check_traveler};
use crate::models::{Client, Flight, Operation, SubscriptionRequest, Traveler, UpdateRequest};
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
    flights: Vec<Flight>,
    first_departure: DateTime<FixedOffset>,
    product_types: Vec<String>,
    booking_number: Option<String>,
    state: QuoteState,
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
}

#[derive(Debug, Clone)]
struct Contract {
    booking_number: String,
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
}

/// What a successful quote returns.
pub struct QuoteCreated {
    pub id: String,
    pub reference: String,
    pub price: f64,
    pub currency: String,
    pub product_types: Vec<String>,
    pub booking_number: Option<String>,
    pub price_delta: Option<f64>,
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
}

fn round_cents(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

impl Store {
    pub fn new(id_salt: u32) -> Self {
        Store {
            id_salt,
            ..Store::default()
        }
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
        format!("{prefix}{:08x}{:06x}", self.id_salt, self.next_id)
    }

    /// Resolves the quotes a subscription or update names, checking each is usable and that
    /// its travelers match it. Returns the quote ids in order.
    fn resolve_quotes(
        &self,
        selections: &[(String, &[Traveler])],
        by_reference: bool,
        booking_number: &str,
        now: DateTime<Utc>,
    ) -> Checked<Vec<String>> {
        if selections.is_empty() {
            return Err(ApiFailure::invalid(
                "data.quotes",
                "at least one quote is required",
            ));
        }
        let key = if by_reference { "reference" } else { "id" };
        let mut ids: Vec<String> = Vec::new();
        for (i, (handle, travelers)) in selections.iter().enumerate() {
            let field = format!("data.quotes[{i}].{key}");
            let id = if by_reference {
                self.quote_ids_by_reference.get(handle).cloned()
            } else {
                Some(handle.clone()).filter(|id| self.quotes.contains_key(id))
            };
            let id = id.ok_or_else(|| {
                ApiFailure::field(
                    &field,
                    "UNKNOWN_QUOTE",
                    format!("no quote with {key} `{handle}`"),
                )
            })?;
            let quote = &self.quotes[&id];
            match quote.state {
                QuoteState::Deleted => {
                    return Err(ApiFailure::field(
                        &field,
                        "UNKNOWN_QUOTE",
                        format!("quote `{handle}` was deleted"),
                    ));
                }
                QuoteState::Used => {
                    return Err(conflict(format!("quote {key} `{handle}` was already sent")));
                }
                QuoteState::Open => {}
            }
            if ids.contains(&id) {
                return Err(ApiFailure::invalid(
                    &field,
                    format!("quote `{handle}` is named twice"),
                ));
            }
            if quote
                .booking_number
                .as_deref()
                .is_some_and(|bn| bn != booking_number)
            {
                return Err(ApiFailure::invalid(
                    &field,
                    "quote was made for another booking",
                ));
            }
            if quote.first_departure <= now {
                return Err(ApiFailure::field(
                    &field,
                    "PAST_DATE",
                    "the quote's departure has passed",
                ));
            }
            let tpath = format!("data.quotes[{i}].travelers");
            if travelers.len() != quote.travelers {
                return Err(ApiFailure::invalid(
                    &tpath,
                    format!(
                        "quote covers {} traveler(s), {} given",
                        quote.travelers,
                        travelers.len()
                    ),
                ));
            }
            for (t, traveler) in travelers.iter().enumerate() {
                check_traveler(traveler, &format!("{tpath}[{t}]"), quote.first_departure)?;
            }
            ids.push(id);
        }
        let currency = &self.quotes[&ids[0]].currency;
        if ids.iter().any(|id| &self.quotes[id].currency != currency) {
            return Err(ApiFailure::invalid(
                "data.quotes",
                "all quotes must share one currency",
            ));
        }
        Ok(ids)
    }

    pub fn subscribe(
        &mut self,
        request: SubscriptionRequest,
        now: DateTime<Utc>,
    ) -> Checked<Value> {
        let bn = request.booking_number.clone();
        validate::check_booking_number(&bn, "data.bookingNumber")?;
        check_client(&request.client, "data.client")?;
        let selections: Vec<(String, &[Traveler])> = request
            .quotes
            .iter()
            .map(|q| (q.reference.clone(), q.travelers.as_slice()))
            .collect();
        let ids = self.resolve_quotes(&selections, true, &bn, now)?;
        if self.bookings.contains_key(&bn) {
            return Err(conflict(format!("booking number `{bn}` was already sent")));
        }
        let travelers = request
            .quotes
            .iter()
            .flat_map(|q| q.travelers.clone())
            .collect();
        let mut booking = self.booking_from_quotes(&ids, request.client, travelers, now);
        for product_type in self.product_types_of(&ids) {
            let id = self.new_id("ct_");
            self.contracts.insert(
                id.clone(),
                Contract {
                    booking_number: bn.clone(),
                    product_type,
                    claim: None,
                },
            );
            booking.contract_ids.push(id);
        }
        for id in &ids {
            self.quotes.get_mut(id).expect("resolved").state = QuoteState::Used;
        }
        self.bookings.insert(bn.clone(), booking);
        self.count(Operation::Subscription);
        Ok(self.subscription_json(&bn))
    }

    fn booking_from_quotes(
        &self,
        ids: &[String],
        client: Client,
        travelers: Vec<Traveler>,
        now: DateTime<Utc>,
    ) -> Booking {
        let quotes: Vec<&QuoteRecord> = ids.iter().map(|id| &self.quotes[id]).collect();
        Booking {
            created_at: now,
            client,
            travelers,
            quote_ids: ids.to_vec(),
            price: round_cents(quotes.iter().map(|q| q.price).sum()),
            currency: quotes[0].currency.clone(),
            flights: quotes.iter().flat_map(|q| q.flights.clone()).collect(),
            first_departure: quotes
                .iter()
                .map(|q| q.first_departure)
                .min()
                .expect("one quote at least"),
            contract_ids: Vec::new(),
        }
    }

    fn product_types_of(&self, ids: &[String]) -> Vec<String> {
        let mut types: Vec<String> = Vec::new();
        for id in ids {
            for t in &self.quotes[id].product_types {
                if !types.contains(t) {
                    types.push(t.clone());
                }
            }
        }
        types
    }

    fn subscription_json(&self, bn: &str) -> Value {
        let booking = &self.bookings[bn];
        json!({
            "bookingNumber": bn,
            "status": "ACTIVE",
            "createdAt": booking.created_at.to_rfc3339(),
            "price": {"amount": booking.price, "currency": booking.currency},
            "quoteIds": booking.quote_ids,
            "travelers": booking.travelers.len(),
            "client": booking.client,
            "contracts": booking.contract_ids.iter().map(|id| json!({"id": id, "productType": self.contracts[id].product_type})).collect::<Vec<_>>(),
        })
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

    /// PATCH: returns the update's summary and the price delta it applied.
    pub fn update(
        &mut self,
        bn: &str,
        request: UpdateRequest,
        now: DateTime<Utc>,
    ) -> Checked<(Value, f64)> {
        self.contracts_exist(bn, now)?;
        if request
            .booking_number
            .as_deref()
            .is_some_and(|given| given != bn)
        {
            return Err(ApiFailure::field(
                "data.bookingNumber",
                "IMMUTABLE_FIELD",
                "the booking number cannot be changed by an update",
            ));
        }
        check_client(&request.client, "data.client")?;
        let selections: Vec<(String, &[Traveler])> = request
            .quotes
            .iter()
            .map(|q| (q.id.clone(), q.travelers.as_slice()))
            .collect();
        let ids = self.resolve_quotes(&selections, false, bn, now)?;
        let travelers = request
            .quotes
            .iter()
            .flat_map(|q| q.travelers.clone())
            .collect();
        let mut updated = self.booking_from_quotes(&ids, request.client, travelers, now);
        let booking = &self.bookings[bn];
        updated.created_at = booking.created_at;
        updated.contract_ids = booking.contract_ids.clone();
        let delta = round_cents(updated.price - booking.price);
        let existing: Vec<String> = updated
            .contract_ids
            .iter()
            .map(|id| self.contracts[id].product_type.clone())
            .collect();
        for product_type in self.product_types_of(&ids) {
            if !existing.contains(&product_type) {
                let id = self.new_id("ct_");
                self.contracts.insert(
                    id.clone(),
                    Contract {
                        booking_number: bn.to_string(),
                        product_type,
                        claim: None,
                    },
                );
                updated.contract_ids.push(id);
            }
        }
        for id in &ids {
            self.quotes.get_mut(id).expect("resolved").state = QuoteState::Used;
        }
        self.bookings.insert(bn.to_string(), updated);
        self.count(Operation::Update);
        Ok((self.subscription_json(bn), delta))
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

fn not_found(message: impl Into<String>) -> ApiFailure {
    ApiFailure::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
}

fn conflict(message: impl Into<String>) -> ApiFailure {
    ApiFailure::new(StatusCode::CONFLICT, "CONFLICT", message)
}

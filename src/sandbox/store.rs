//! The sandbox's in-memory state and business rules: pricing, conflicts, contracts and claims.

use std::collections::{BTreeMap, HashMap, HashSet};

use axum::http::StatusCode;
use chrono::{DateTime, Duration, FixedOffset, Utc};
use serde_json::{Value, json};

use super::validate::{
    self, ApiFailure, Checked, QuoteFacts, check_beneficiary, check_client, check_traveler,
};
use crate::models::{
    CHANGE_FOR_ANY_REASON, ClaimRequest, Client, Flight, FlightCancellationReport, Operation,
    QuoteRequest, SubscriptionRequest, Traveler, UpdateRequest, WITHDRAWAL,
};

/// The product price is this share of the trip price (spec §4.5: "a percentage of it").
pub const PRODUCT_RATE: f64 = 0.05;
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

    pub fn create_quote(
        &mut self,
        quote: QuoteRequest,
        facts: QuoteFacts,
    ) -> Checked<QuoteCreated> {
        let product_types = product_types(quote.product_types.as_deref())?;
        let price = round_cents(facts.trip_total * PRODUCT_RATE);
        // A quote naming an existing booking is an update quote (DESIGN.md): it reports the
        // signed change of product price.
        let price_delta = quote
            .booking_number
            .as_ref()
            .and_then(|bn| self.bookings.get(bn))
            .map(|booking| round_cents(price - booking.price));
        let id = self.new_id("qt_");
        let reference = self.new_id("QR-").to_uppercase();
        self.quote_ids_by_reference
            .insert(reference.clone(), id.clone());
        self.quotes.insert(
            id.clone(),
            QuoteRecord {
                currency: quote.currency.clone(),
                price,
                travelers: facts.travelers,
                flights: facts.flights,
                first_departure: facts.first_departure,
                product_types: product_types.clone(),
                booking_number: quote.booking_number.clone(),
                state: QuoteState::Open,
            },
        );
        self.count(Operation::Quote);
        Ok(QuoteCreated {
            id,
            reference,
            price,
            currency: quote.currency,
            product_types,
            booking_number: quote.booking_number,
            price_delta,
        })
    }

    pub fn delete_quote(&mut self, id: &str) -> Checked<()> {
        let quote = self
            .quotes
            .get_mut(id)
            .filter(|q| q.state != QuoteState::Deleted)
            .ok_or_else(|| not_found(format!("no quote with id `{id}`")))?;
        if quote.state == QuoteState::Used {
            return Err(conflict(format!(
                "quote `{id}` is already used by a subscription"
            )));
        }
        quote.state = QuoteState::Deleted;
        self.count(Operation::QuoteDeletion);
        Ok(())
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

    pub fn claim(
        &mut self,
        contract_id: &str,
        request: ClaimRequest,
        now: DateTime<Utc>,
        rules: Rules,
    ) -> Checked<Value> {
        let contract = self
            .contracts
            .get(contract_id)
            .ok_or_else(|| not_found(format!("no contract with id `{contract_id}`")))?;
        if contract.claim.is_some() {
            return Err(conflict(format!(
                "contract `{contract_id}` already has a claim"
            )));
        }
        let modification_cost = check_claim_product(&contract.product_type, &request)?;
        if let Some(beneficiary) = &request.beneficiary {
            check_beneficiary(beneficiary)?;
        }
        let booking = &self.bookings[&contract.booking_number];
        let claim_date = match &request.claim_date {
            Some(_) if rules.production => {
                return Err(ApiFailure::field(
                    "data.claimDate",
                    "CLAIM_DATE_UNAVAILABLE",
                    "claimDate is unavailable in production",
                ));
            }
            Some(value) => {
                let at = validate::parse_claim_date(value)?;
                if at < booking.created_at {
                    return Err(ApiFailure::invalid(
                        "data.claimDate",
                        "claimDate may only postdate the claim, not precede the subscription",
                    ));
                }
                Some(at)
            }
            None => None,
        };
        let effective = claim_date.unwrap_or(now).max(now);
        let flagged = effective - booking.created_at < Duration::hours(FRAUD_WINDOW_HOURS);
        let claim = Claim {
            id: self.new_id("cl_"),
            created_at: now,
            claim_date,
            flagged,
            bank_details: request.beneficiary.is_some(),
            modification_cost,
        };
        let value = claim_json(&claim, contract_id, now, rules);
        self.contracts.get_mut(contract_id).expect("checked").claim = Some(claim);
        self.count(Operation::Claim);
        Ok(value)
    }

    pub fn report_flight_cancellation(
        &mut self,
        report: FlightCancellationReport,
    ) -> Checked<Value> {
        validate::check_booking_number(&report.booking_number, "data.bookingNumber")?;
        let wanted = flight_departure(&report.departure_date)?;
        let booking = self.bookings.get(&report.booking_number).ok_or_else(|| {
            not_found(format!(
                "no contract for booking number `{}`",
                report.booking_number
            ))
        })?;
        let index = booking
            .flights
            .iter()
            .position(|f| {
                f.airline_iata == report.airline_iata
                    && f.number == report.number
                    && wanted.matches(&f.departure_date)
            })
            .ok_or_else(|| not_found("no contract of this booking covers that flight"))?;
        if !self
            .reported_flights
            .insert((report.booking_number.clone(), index))
        {
            return Err(conflict("this flight cancellation was already reported"));
        }
        let id = self.new_id("fc_");
        self.count(Operation::FlightCancellation);
        Ok(
            json!({"id": id, "bookingNumber": report.booking_number, "airlineIata": report.airline_iata, "number": report.number, "status": "RECORDED"}),
        )
    }
}

enum DepartureMatch {
    Instant(DateTime<FixedOffset>),
    Date(chrono::NaiveDate),
}

impl DepartureMatch {
    fn matches(&self, departure: &str) -> bool {
        let Ok(at) = DateTime::parse_from_rfc3339(departure) else {
            return false;
        };
        match self {
            DepartureMatch::Instant(wanted) => at == *wanted,
            DepartureMatch::Date(date) => at.date_naive() == *date,
        }
    }
}

fn flight_departure(value: &str) -> Checked<DepartureMatch> {
    if let Ok(at) = DateTime::parse_from_rfc3339(value) {
        return Ok(DepartureMatch::Instant(at));
    }
    validate::parse_date(value, "data.departureDate").map(DepartureMatch::Date)
}

fn product_types(requested: Option<&[String]>) -> Checked<Vec<String>> {
    let Some(requested) = requested else {
        return Ok(vec![WITHDRAWAL.to_string()]);
    };
    if requested.is_empty() {
        return Err(ApiFailure::invalid(
            "data.productTypes",
            "productTypes may not be empty",
        ));
    }
    for (i, t) in requested.iter().enumerate() {
        if t != WITHDRAWAL && t != CHANGE_FOR_ANY_REASON {
            return Err(ApiFailure::invalid(
                format!("data.productTypes[{i}]"),
                format!("unknown product type `{t}`"),
            ));
        }
    }
    let mut types = requested.to_vec();
    types.dedup();
    Ok(types)
}

/// CHANGE_FOR_ANY_REASON needs `modificationCost` and `productType`; WITHDRAWAL needs nothing.
fn check_claim_product(contract_type: &str, request: &ClaimRequest) -> Checked<Option<f64>> {
    if let Some(given) = &request.product_type
        && given != contract_type
    {
        return Err(ApiFailure::invalid(
            "data.productType",
            format!("productType `{given}` does not match the contract's `{contract_type}`"),
        ));
    }
    if contract_type != CHANGE_FOR_ANY_REASON {
        return Ok(None);
    }
    if request.product_type.is_none() {
        return Err(ApiFailure::invalid(
            "data.productType",
            "missing field `productType` (required for CHANGE_FOR_ANY_REASON)",
        ));
    }
    let cost = request.modification_cost.as_ref().ok_or_else(|| {
        ApiFailure::invalid(
            "data.modificationCost",
            "missing field `modificationCost` (required for CHANGE_FOR_ANY_REASON)",
        )
    })?;
    validate::parse_modification_cost(cost).map(Some)
}

/// The claim's status now: flagged claims wait for a person; without bank details a claim
/// stays ACCEPTED; with them it moves ACCEPTED → REFUNDABLE → REFUNDED, one step per `claim_step`.
fn claim_status(claim: &Claim, now: DateTime<Utc>, rules: Rules) -> &'static str {
    if claim.flagged {
        return "MANUAL_VERIFICATION_NEEDED";
    }
    if !claim.bank_details {
        return "ACCEPTED";
    }
    let elapsed = now - claim.created_at;
    if rules.claim_step <= Duration::zero() || elapsed >= rules.claim_step * 2 {
        "REFUNDED"
    } else if elapsed >= rules.claim_step {
        "REFUNDABLE"
    } else {
        "ACCEPTED"
    }
}

fn claim_json(claim: &Claim, contract_id: &str, now: DateTime<Utc>, rules: Rules) -> Value {
    let mut value = json!({
        "id": claim.id,
        "contractId": contract_id,
        "status": claim_status(claim, now, rules),
        "createdAt": claim.created_at.to_rfc3339(),
    });
    if let Some(at) = claim.claim_date {
        value["claimDate"] = json!(at.to_rfc3339());
    }
    if let Some(cost) = claim.modification_cost {
        value["modificationCost"] = json!(cost);
    }
    value
}

fn not_found(message: impl Into<String>) -> ApiFailure {
    ApiFailure::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
}

fn conflict(message: impl Into<String>) -> ApiFailure {
    ApiFailure::new(StatusCode::CONFLICT, "CONFLICT", message)
}

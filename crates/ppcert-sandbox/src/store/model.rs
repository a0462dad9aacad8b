//! The store's state: what it holds of quotes, bookings, contracts and claims, and the few
//! helpers every file of `store/` uses (ids, counts, the 404 and 409 answers). A file of its own
//! so that `quotes.rs`, `bookings.rs`, `claims.rs` and the rest import it, not `store/mod.rs`.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use axum::http::StatusCode;
use chrono::{DateTime, Duration, FixedOffset, Utc};

use crate::models::events::Event;
use crate::models::{Client, Flight, Operation, ProductType, Traveler};
use crate::validate::ApiFailure;

/// Unused quotes held at most, by default.
pub const DEFAULT_MAX_OPEN_QUOTES: usize = 100_000;
/// Bookings (subscriptions) held at most, by default.
pub const DEFAULT_MAX_BOOKINGS: usize = 10_000;

/// Spec §8.1: a claim sooner than this after the subscription is flagged.
pub const FRAUD_WINDOW_HOURS: i64 = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum QuoteState {
    Open,
    Used,
    Deleted,
}

#[derive(Debug, Clone)]
pub(super) struct QuoteRecord {
    pub(super) currency: String,
    pub(super) price: f64,
    pub(super) travelers: usize,
    /// The flights as compact JSON: a long-lived sandbox holds up to `--max-quotes` open
    /// quotes, and one string costs a fraction of six per flight. Read back on subscription.
    pub(super) flights: Box<str>,
    pub(super) first_departure: DateTime<FixedOffset>,
    pub(super) product_types: Box<[ProductType]>,
    pub(super) booking_number: Option<String>,
    pub(super) state: QuoteState,
    pub(super) created_at: DateTime<Utc>,
    /// The bundle this quote prices, when the answer offered one per bundle.
    pub(super) bundle: Option<Box<str>>,
}

#[derive(Debug, Clone)]
pub(super) struct Booking {
    pub(super) created_at: DateTime<Utc>,
    pub(super) client: Client,
    pub(super) travelers: Vec<Traveler>,
    pub(super) quote_ids: Vec<String>,
    pub(super) price: f64,
    pub(super) currency: String,
    pub(super) flights: Vec<Flight>,
    pub(super) first_departure: DateTime<FixedOffset>,
    pub(super) contract_ids: Vec<String>,
    /// Changes with every update: what the booking's `ETag` names.
    pub(super) version: u32,
}

#[derive(Debug, Clone)]
pub(super) struct Contract {
    pub(super) booking_number: String,
    pub(super) created_at: DateTime<Utc>,
    pub(super) product_type: String,
    pub(super) claim: Option<Claim>,
}

#[derive(Debug, Clone)]
pub(super) struct Claim {
    pub(super) id: String,
    pub(super) created_at: DateTime<Utc>,
    pub(super) claim_date: Option<DateTime<Utc>>,
    pub(super) flagged: bool,
    pub(super) bank_details: bool,
    pub(super) modification_cost: Option<f64>,
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
    /// Boxed: a steady 140,000 entries (open and closed) made the table double to 2^19
    /// buckets after enough churn, and a bucket holding the record inline cost 176 bytes.
    pub(super) quotes: HashMap<String, Box<QuoteRecord>>,
    pub(super) quote_ids_by_reference: HashMap<String, String>,
    pub(super) bookings: HashMap<String, Booking>,
    pub(super) contracts: HashMap<String, Contract>,
    pub(super) reported_flights: HashSet<(String, usize)>,
    pub(super) counts: BTreeMap<Operation, u64>,
    pub(super) next_id: u64,
    pub(super) id_salt: u32,
    /// Decimal ids (a layout variant): some servers number their objects.
    pub(super) numeric_ids: bool,
    pub(super) expiry: Expiry,
    pub(super) retention: Retention,
    /// Subscriptions per bundle of the quotes they used (multi-bundle answers only).
    pub(super) subscribed_bundles: BTreeMap<String, u64>,
    /// Webhook events not yet handed to the sender; `None` when webhooks are off.
    pub(super) events: Option<Vec<Scheduled>>,
}

/// Quotes are known here by the counter their id was made from (its reference's is the next):
/// 24 bytes an entry instead of two strings, for up to `--max-quotes` entries.
#[derive(Debug)]
pub(super) struct Expiry {
    /// (id counter, made at) in creation order; entries whose quote was used or deleted are
    /// skipped.
    pub(super) order: VecDeque<(u64, DateTime<Utc>)>,
    pub(super) open: usize,
    pub(super) max_open: usize,
    /// Retired quote's id counter → when and why. The message is written only when someone
    /// uses the quote.
    pub(super) tombstones: HashMap<u64, Retired>,
    pub(super) tomb_order: VecDeque<u64>,
}

/// When a quote was retired, and whether by the limit of open quotes (else by age).
#[derive(Debug, Clone, Copy)]
pub(super) struct Retired {
    pub(super) at: DateTime<Utc>,
    pub(super) by_limit: bool,
}

impl Default for Expiry {
    fn default() -> Self {
        Expiry {
            order: VecDeque::new(),
            open: 0,
            max_open: DEFAULT_MAX_OPEN_QUOTES,
            tombstones: HashMap::new(),
            tomb_order: VecDeque::new(),
        }
    }
}

#[derive(Debug)]
pub(super) struct Retention {
    pub(super) max_bookings: usize,
    /// Booking numbers in the order they were made.
    pub(super) bookings: VecDeque<String>,
    /// Quote ids in the order they were used or deleted.
    pub(super) closed_quotes: VecDeque<String>,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_bookings: DEFAULT_MAX_BOOKINGS,
            bookings: VecDeque::new(),
            closed_quotes: VecDeque::new(),
        }
    }
}

/// An event to deliver `after` from now.
#[derive(Debug, Clone)]
pub struct Scheduled {
    pub after: Duration,
    pub event: Event,
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

    pub(super) fn count(&mut self, op: Operation) {
        *self.counts.entry(op).or_default() += 1;
    }

    pub(super) fn new_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        self.id_text(prefix, self.next_id)
    }

    /// The id `new_id(prefix)` made when its counter was `n`.
    pub(super) fn id_text(&self, prefix: &str, n: u64) -> String {
        if self.numeric_ids && prefix != "QR-" {
            return (self.numeric_base() + n).to_string();
        }
        format!("{prefix}{:08x}{:06x}", self.id_salt, n)
    }

    pub(super) fn numeric_base(&self) -> u64 {
        u64::from(self.id_salt % 9_000 + 1_000) * 1_000_000_000
    }
}

pub(super) fn not_found(message: impl Into<String>) -> ApiFailure {
    ApiFailure::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
}

pub(super) fn conflict(message: impl Into<String>) -> ApiFailure {
    ApiFailure::new(StatusCode::CONFLICT, "CONFLICT", message)
}

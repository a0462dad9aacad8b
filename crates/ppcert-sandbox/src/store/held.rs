//! How many entries each of the sandbox's stores holds: what the tests of their caps count
//! (every cap is listed in docs/sandbox.md).

use super::model::{QuoteState, Store};

/// Entries held per store. Each is capped, so none grows with how long the sandbox runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    /// Quotes held: open, used and deleted.
    pub quotes: usize,
    pub open_quotes: usize,
    /// References leading back to a quote.
    pub quote_references: usize,
    /// Quotes in the order they were made, for their expiry.
    pub quotes_by_age: usize,
    /// Used or deleted quotes, in the order they were closed.
    pub closed_quotes: usize,
    /// Expired quotes remembered to say why they are refused.
    pub expired_quotes: usize,
    pub bookings: usize,
    pub contracts: usize,
    pub reported_flights: usize,
    pub idempotency_keys: usize,
    pub operations: usize,
    pub tokens: usize,
}

impl Store {
    pub(crate) fn held(&self) -> Held {
        Held {
            quotes: self.quotes.len(),
            open_quotes: (self.quotes.values())
                .filter(|q| q.state == QuoteState::Open)
                .count(),
            quote_references: self.quote_ids_by_reference.len(),
            quotes_by_age: self.expiry.order.len(),
            closed_quotes: self.retention.closed_quotes.len(),
            expired_quotes: self.expiry.tombstones.len(),
            bookings: self.bookings.len(),
            contracts: self.contracts.len(),
            reported_flights: self.reported_flights.len(),
            ..Held::default()
        }
    }
}

//! What a staging's quirks are and what the sandbox saw of them: the types the options, the
//! shared state and the quirks' middleware all use, in a file of their own so none imports back.

use std::sync::atomic::{AtomicU64, Ordering};

/// Where the flight-status call is served when [`Quirks::flight_status_put`] is on.
pub const FLIGHT_STATUS_PATH: &str = "/bookings/{booking_number}/flight-status";

/// The ways of being called that a staging may add; all off by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Quirks {
    /// Every API route is served only with a trailing slash (`/quotes/`, `/quotes/{id}/`);
    /// the bare path answers `308 Permanent Redirect` to the slashed one. `/openapi.json` and
    /// `/oauth/token` stay where they are.
    pub trailing_slash: bool,
    /// A request body's date-time that is not a UTC instant ending in `Z` is refused (400,
    /// naming the field).
    pub utc_only: bool,
    /// The flight-cancellation report is `PUT /bookings/{bookingNumber}/flight-status` with
    /// `{"data": {"airlineIata", "number", "departureDate", "status": "CANCELLED"}}`, answered
    /// 200, instead of the dialect's call.
    pub flight_status_put: bool,
}

/// What the sandbox saw of its quirks, counted over every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QuirksSeen {
    /// API calls that came with the trailing slash.
    pub slashed: u64,
    /// Bare paths answered with a redirect to the slashed one.
    pub redirected: u64,
    /// Date-times refused for not being UTC instants.
    pub not_utc: u64,
    /// Flight-status reports made with `PUT`.
    pub flight_status_puts: u64,
    /// Requests whose `Accept-Encoding` allowed gzip.
    pub gzip_accepted: u64,
}

/// The counters behind [`QuirksSeen`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(super) slashed: AtomicU64,
    pub(super) redirected: AtomicU64,
    pub(super) not_utc: AtomicU64,
    pub(super) flight_status_puts: AtomicU64,
    pub(super) gzip_accepted: AtomicU64,
}

impl Counters {
    pub(crate) fn seen(&self) -> QuirksSeen {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        QuirksSeen {
            slashed: get(&self.slashed),
            redirected: get(&self.redirected),
            not_utc: get(&self.not_utc),
            flight_status_puts: get(&self.flight_status_puts),
            gzip_accepted: get(&self.gzip_accepted),
        }
    }
}

pub(super) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

//! The sequencing rules only a record of the session can tell: what the proxy has seen of each
//! booking, and the checks that need it (an update without a fresh update quote, a claim within
//! 24 h of its subscription without `claimDate`, several flight plans in one quote).

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

use super::json::text;
use crate::record::Check;

pub(super) const NOT_REUSED: &str = "booking number not reused";
pub(super) const FRESH_UPDATE_QUOTE: &str = "update uses a fresh update quote";
pub(super) const CLAIM_AFTER_24H: &str =
    "claim 24 h after its subscription, or claimDate on staging";
pub(super) const ONE_FLIGHT_PLAN: &str = "one quote per flight plan";

#[derive(Default)]
pub(super) struct Booking {
    pub(super) subscribed_at: Option<DateTime<Utc>>,
    /// Quotes made for this booking after its subscription and not yet used by an update.
    pub(super) update_quotes: HashSet<String>,
}

#[derive(Default)]
pub(super) struct Known {
    pub(super) bookings: HashMap<String, Booking>,
    /// Quote id or reference → the booking it was made for or used by.
    pub(super) quote_booking: HashMap<String, String>,
    pub(super) contract_booking: HashMap<String, String>,
}

impl Known {
    /// A quote made for booking `bn`: after its subscription, an update quote it may use.
    pub(super) fn quote_made(&mut self, bn: &str, id: String) {
        self.quote_booking.insert(id.clone(), bn.to_string());
        if let Some(booking) = self.bookings.get_mut(bn)
            && booking.subscribed_at.is_some()
        {
            booking.update_quotes.insert(id);
        }
    }
}

pub(super) fn one_flight_plan(quote: &Value) -> Check {
    let plans: HashSet<String> = quote["data"]["trips"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|trip| trip["journeys"].to_string())
        .collect();
    if plans.len() > 1 {
        Check::fail(
            ONE_FLIGHT_PLAN,
            format!(
                "$.data.trips: {} different flight plans in one quote; make one quote per flight plan (travelers who fly the same flights share one)",
                plans.len()
            ),
        )
    } else {
        Check::pass(ONE_FLIGHT_PLAN, "the quote's trips share one flight plan")
    }
}

pub(super) fn fresh_update_quote(
    update: &Value,
    state: Option<&Booking>,
    booking: Option<&str>,
) -> Check {
    let Some(state) = state.filter(|b| b.subscribed_at.is_some()) else {
        return Check::pass(
            FRESH_UPDATE_QUOTE,
            "the booking's subscription was not seen through the proxy: not judged",
        )
        .warning();
    };
    let ids: Vec<String> = update["data"]["quotes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|q| text(&q["id"]))
        .collect();
    match ids.iter().find(|id| !state.update_quotes.contains(*id)) {
        Some(stale) => Check::fail(
            FRESH_UPDATE_QUOTE,
            format!(
                "$.data.quotes: quote `{stale}` was not made for booking `{}` (POST /quotes with its bookingNumber) since its subscription",
                booking.unwrap_or_default()
            ),
        ),
        None if ids.is_empty() => {
            Check::fail(FRESH_UPDATE_QUOTE, "$.data.quotes: no quote id given")
        }
        None => Check::pass(
            FRESH_UPDATE_QUOTE,
            "every quote was made for this booking after its subscription",
        ),
    }
}

pub(super) fn claim_timing(
    claim: &Value,
    state: Option<&Booking>,
    now: DateTime<Utc>,
    production: bool,
) -> Check {
    let Some(subscribed) = state.and_then(|b| b.subscribed_at) else {
        return Check::pass(
            CLAIM_AFTER_24H,
            "the booking's subscription was not seen through the proxy: not judged",
        )
        .warning();
    };
    let since = now - subscribed;
    if since >= Duration::hours(24) || (!production && !claim["data"]["claimDate"].is_null()) {
        return Check::pass(CLAIM_AFTER_24H, "not flagged for fraud by timing");
    }
    let check = Check::fail(
        CLAIM_AFTER_24H,
        format!(
            "$.data.claimDate: the claim comes {} min after the subscription; within 24 h the provider flags it MANUAL_VERIFICATION_NEEDED{}",
            since.num_minutes(),
            if production {
                ""
            } else {
                " (on staging, send claimDate)"
            }
        ),
    );
    // Production takes no claimDate: a real early claim is the customer's right, not a mistake.
    if production { check.warning() } else { check }
}

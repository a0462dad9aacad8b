//! Quote lifetime, so a long-lived `ppcert serve` holds bounded memory: an unused quote expires
//! after its validity (72 h, the provider's documented default, by the sandbox's clock), and
//! beyond `max_open` unused quotes the oldest go first. What is retired leaves a small
//! tombstone (itself bounded), so using it is refused saying that it expired, and when.

use std::collections::{HashMap, VecDeque};

use chrono::{DateTime, Duration, Utc};

use super::{QuoteState, Store};

/// How long an unused quote stays valid.
pub const QUOTE_VALIDITY_HOURS: i64 = 72;
/// Unused quotes held at most, by default.
pub const DEFAULT_MAX_OPEN_QUOTES: usize = 100_000;

#[derive(Debug)]
pub(super) struct Expiry {
    /// (id, reference, made at) in creation order; entries whose quote was used or deleted
    /// are skipped.
    order: VecDeque<(String, String, DateTime<Utc>)>,
    open: usize,
    max_open: usize,
    /// Retired id or reference → when, and whether by the limit (else by age). Compact: the
    /// message is written only when someone uses the quote.
    tombstones: HashMap<Box<str>, (DateTime<Utc>, bool)>,
    tomb_order: VecDeque<Box<str>>,
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

/// When a quote made at `created` stops being valid.
pub fn expires_at(created: DateTime<Utc>) -> DateTime<Utc> {
    created + Duration::hours(QUOTE_VALIDITY_HOURS)
}

impl Store {
    pub fn with_max_open_quotes(mut self, max_open: usize) -> Self {
        self.expiry.max_open = max_open.max(1);
        self
    }

    /// A new open quote; retires what has expired or overflows.
    pub(super) fn remember_open(&mut self, id: &str, reference: &str, created: DateTime<Utc>) {
        self.expiry
            .order
            .push_back((id.to_string(), reference.to_string(), created));
        self.expiry.open += 1;
        self.sweep(created);
    }

    /// An open quote was used or deleted: it no longer counts against the limit.
    pub(super) fn closed_quote(&mut self) {
        self.expiry.open = self.expiry.open.saturating_sub(1);
    }

    fn sweep(&mut self, now: DateTime<Utc>) {
        while let Some((id, reference, created)) = self.expiry.order.front().cloned() {
            let still_open = self
                .quotes
                .get(&id)
                .is_some_and(|q| q.state == QuoteState::Open);
            if !still_open {
                self.expiry.order.pop_front();
            } else if expires_at(created) <= now {
                self.retire(&id, &reference, (expires_at(created), false));
            } else if self.expiry.open > self.expiry.max_open {
                self.retire(&id, &reference, (now, true));
            } else {
                break;
            }
        }
    }

    fn retire(&mut self, id: &str, reference: &str, why: (DateTime<Utc>, bool)) {
        self.expiry.order.pop_front();
        self.expiry.open = self.expiry.open.saturating_sub(1);
        self.quotes.remove(id);
        self.quote_ids_by_reference.remove(reference);
        for handle in [id, reference] {
            self.expiry.tombstones.insert(handle.into(), why);
            self.expiry.tomb_order.push_back(handle.into());
        }
        while self.expiry.tomb_order.len() > 2 * self.expiry.max_open {
            if let Some(old) = self.expiry.tomb_order.pop_front() {
                self.expiry.tombstones.remove(&old);
            }
        }
    }

    /// Why `handle` (an id or a reference) names no quote any more, if it expired.
    pub(super) fn expired(&self, handle: &str) -> Option<String> {
        let (at, by_limit) = self.expiry.tombstones.get(handle)?;
        let at = at.to_rfc3339();
        Some(if *by_limit {
            let max = self.expiry.max_open;
            format!(
                "expired at {at}: more than {max} unused quotes were held and it was the oldest"
            )
        } else {
            format!("expired at {at} ({QUOTE_VALIDITY_HOURS} h after it was made)")
        })
    }
}

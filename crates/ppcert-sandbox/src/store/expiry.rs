//! Quote lifetime, so a long-lived `ppcert serve` holds bounded memory: an unused quote expires
//! after its validity (72 h, the provider's documented default, by the sandbox's clock), and
//! beyond `max_open` unused quotes the oldest go first. What is retired leaves a small
//! tombstone (itself bounded), so using it is refused saying that it expired, and when.

use chrono::{DateTime, Duration, Utc};

use super::model::{QuoteState, Retired, Store};

/// How long an unused quote stays valid.
pub const QUOTE_VALIDITY_HOURS: i64 = 72;

/// When a quote made at `created` stops being valid.
pub fn expires_at(created: DateTime<Utc>) -> DateTime<Utc> {
    created + Duration::hours(QUOTE_VALIDITY_HOURS)
}

impl Store {
    pub fn with_max_open_quotes(mut self, max_open: usize) -> Self {
        self.expiry.max_open = max_open.max(1);
        self
    }

    /// A new open quote (its id's counter); retires what has expired or overflows.
    pub(super) fn remember_open(&mut self, counter: u64, created: DateTime<Utc>) {
        self.expiry.order.push_back((counter, created));
        self.expiry.open += 1;
        self.sweep(created);
        // The sweep stops at the oldest quote still open and young: one quote left unused
        // kept every quote made after it in `order` for its 72 h. Past twice the open quotes'
        // limit, the entries of used or deleted quotes go (at most `max_open` stay, so this
        // runs once per `max_open` quotes at most).
        if self.expiry.order.len() > 2 * self.expiry.max_open {
            let order = std::mem::take(&mut self.expiry.order);
            self.expiry.order = (order.into_iter())
                .filter(|(counter, _)| self.open_quote(*counter))
                .collect();
        }
    }

    /// Whether the quote made from `counter` is held and open.
    fn open_quote(&self, counter: u64) -> bool {
        (self.quotes.get(&self.id_text("qt_", counter)))
            .is_some_and(|q| q.state == QuoteState::Open)
    }

    /// An open quote was used or deleted: it no longer counts against the limit.
    pub(super) fn closed_quote(&mut self) {
        self.expiry.open = self.expiry.open.saturating_sub(1);
    }

    fn sweep(&mut self, now: DateTime<Utc>) {
        while let Some(&(counter, created)) = self.expiry.order.front() {
            let id = self.id_text("qt_", counter);
            let still_open = self
                .quotes
                .get(&id)
                .is_some_and(|q| q.state == QuoteState::Open);
            if !still_open {
                self.expiry.order.pop_front();
            } else if expires_at(created) <= now {
                self.retire(
                    counter,
                    &id,
                    Retired {
                        at: expires_at(created),
                        by_limit: false,
                    },
                );
            } else if self.expiry.open > self.expiry.max_open {
                self.retire(
                    counter,
                    &id,
                    Retired {
                        at: now,
                        by_limit: true,
                    },
                );
            } else {
                break;
            }
        }
    }

    fn retire(&mut self, counter: u64, id: &str, why: Retired) {
        self.expiry.order.pop_front();
        self.expiry.open = self.expiry.open.saturating_sub(1);
        self.quotes.remove(id);
        let reference = self.id_text("QR-", counter + 1).to_uppercase();
        self.quote_ids_by_reference.remove(&reference);
        self.expiry.tombstones.insert(counter, why);
        self.expiry.tomb_order.push_back(counter);
        while self.expiry.tomb_order.len() > self.expiry.max_open {
            if let Some(old) = self.expiry.tomb_order.pop_front() {
                self.expiry.tombstones.remove(&old);
            }
        }
    }

    /// The counter of the quote `handle` (its id or its reference) names, if it is one of ours.
    fn quote_counter(&self, handle: &str) -> Option<u64> {
        let (text, counter) = if let Some(rest) = handle.strip_prefix("QR-") {
            let n = u64::from_str_radix(rest.get(8..)?, 16).ok()?;
            (self.id_text("QR-", n).to_uppercase(), n.checked_sub(1)?)
        } else if self.numeric_ids {
            let n = handle
                .parse::<u64>()
                .ok()?
                .checked_sub(self.numeric_base())?;
            (self.id_text("qt_", n), n)
        } else {
            let n = u64::from_str_radix(handle.strip_prefix("qt_")?.get(8..)?, 16).ok()?;
            (self.id_text("qt_", n), n)
        };
        // Only the exact spelling we made: another salt or padding is another quote.
        (text == handle).then_some(counter)
    }

    /// Why `handle` (an id or a reference) names no quote any more, if it expired.
    pub(super) fn expired(&self, handle: &str) -> Option<String> {
        let retired = self.expiry.tombstones.get(&self.quote_counter(handle)?)?;
        let at = retired.at.to_rfc3339();
        Some(if retired.by_limit {
            let max = self.expiry.max_open;
            format!(
                "expired at {at}: more than {max} unused quotes were held and it was the oldest"
            )
        } else {
            format!("expired at {at} ({QUOTE_VALIDITY_HOURS} h after it was made)")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_or_a_reference_leads_back_to_its_quote_and_nothing_else_does() {
        for numeric in [false, true] {
            let store = Store::new(0xBEEF).with_numeric_ids(numeric);
            let id = store.id_text("qt_", 5);
            let reference = store.id_text("QR-", 6).to_uppercase();
            assert_eq!(store.quote_counter(&id), Some(5), "{id}");
            assert_eq!(store.quote_counter(&reference), Some(5), "{reference}");
            let other = Store::new(0xF00D).with_numeric_ids(numeric);
            // Numeric ids carry no salt: another sandbox's id is merely another counter here.
            assert_ne!(store.quote_counter(&other.id_text("qt_", 5)), Some(5));
            assert_eq!(
                store.quote_counter(&other.id_text("QR-", 6).to_uppercase()),
                None
            );
            for foreign in ["", "qt_", "QR-", "qt_zz", "QR-0000BEEF00000G", "nope", "-1"] {
                assert_eq!(store.quote_counter(foreign), None, "{foreign}");
            }
        }
    }
}

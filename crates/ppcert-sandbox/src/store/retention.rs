//! Bounded bookings, so a long-lived shared `ppcert serve` stays flat under whole
//! certification batches: beyond `max_bookings` the oldest bookings are forgotten with their
//! contracts, claims and flight reports, and quotes that were used or deleted are forgotten
//! beyond a multiple of that. A forgotten booking or quote answers 404, like one never made.

use super::model::Store;

/// Used or deleted quotes held per booking held: a batch uses about two quotes a booking.
const CLOSED_QUOTES_PER_BOOKING: usize = 4;

impl Store {
    pub fn with_max_bookings(mut self, max_bookings: usize) -> Self {
        self.retention.max_bookings = max_bookings.max(1);
        self
    }

    /// A new booking: the oldest go once there are more than the limit.
    pub(super) fn remember_booking(&mut self, bn: &str) {
        self.retention.bookings.push_back(bn.to_string());
        while self.retention.bookings.len() > self.retention.max_bookings {
            let Some(oldest) = self.retention.bookings.pop_front() else {
                break;
            };
            self.forget_booking(&oldest);
        }
    }

    fn forget_booking(&mut self, bn: &str) {
        let Some(booking) = self.bookings.remove(bn) else {
            return;
        };
        for id in &booking.contract_ids {
            self.contracts.remove(id);
        }
        for index in 0..booking.flights.len() {
            self.reported_flights.remove(&(bn.to_string(), index));
        }
    }

    /// A quote was used or deleted: the oldest such go once there are more than the limit.
    pub(super) fn remember_closed_quote(&mut self, id: &str) {
        self.retention.closed_quotes.push_back(id.to_string());
        let max = self.retention.max_bookings * CLOSED_QUOTES_PER_BOOKING;
        while self.retention.closed_quotes.len() > max {
            let Some(oldest) = self.retention.closed_quotes.pop_front() else {
                break;
            };
            self.quotes.remove(&oldest);
            if let Some(counter) = self.counter_of(&oldest) {
                let reference = self.id_text("QR-", counter + 1).to_uppercase();
                self.quote_ids_by_reference.remove(&reference);
            }
        }
    }

    /// The counter a quote id was made from (see `Store::id_text`).
    fn counter_of(&self, id: &str) -> Option<u64> {
        if self.numeric_ids {
            return id.parse::<u64>().ok()?.checked_sub(self.numeric_base());
        }
        let digits = id.strip_prefix("qt_")?.get(8..)?;
        u64::from_str_radix(digits, 16).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_ids_give_back_their_counter() {
        for numeric in [false, true] {
            let mut store = Store::new(0xabcdef).with_numeric_ids(numeric);
            let id = store.new_id("qt_");
            assert_eq!(store.counter_of(&id), Some(store.next_id), "{id}");
        }
    }
}

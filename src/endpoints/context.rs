//! The template context of endpoint paths, bodies and captures (README: "Template context"),
//! built from a booking; steps add the quote, contract and claim dates they know.

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::datagen::Booking;

pub fn booking_context(booking: &Booking) -> Value {
    let mut flight = json!(booking.first_flight());
    // The provider's flight-status call names the flight by its local departure date: the
    // date part of the departure, which carries the airport's own UTC offset.
    let local_date: String = booking
        .first_flight()
        .departure_date
        .chars()
        .take(10)
        .collect();
    flight["localDepartureDate"] = json!(local_date);
    json!({
        "booking": {
            "number": booking.number, "client": booking.client, "currency": booking.currency,
            "travelers": booking.travelers().collect::<Vec<_>>(), "plans": booking.plans,
            "language": booking.language,
        },
        "flight": flight,
        "beneficiary": booking.beneficiary,
        "now": Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
    })
}

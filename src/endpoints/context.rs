//! The one template context of endpoint paths, bodies, headers and captures (docs/config.md: "Template
//! context"), built from a booking and what the call knows; `run`, `probe`, `validate` and the
//! rehearsal before a run all build it here, so whatever one accepts the others accept.

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::datagen::Booking;
use crate::models::{ClaimRequest, Envelope, Operation};

/// What a call knows beyond its booking; what it does not know is absent from the context, so
/// a template that needs it fails before sending rather than sending a placeholder.
#[derive(Debug, Clone, Default)]
pub(crate) struct Known<'a> {
    /// The quote's id and reference.
    pub quote: Option<(&'a str, &'a str)>,
    pub contract: Option<&'a str>,
    /// `claim_date` (date-time) and `claim_day` (date); staging only.
    pub claim_dates: Option<(String, String)>,
    pub product_type: Option<&'a str>,
    /// One per logical write (see [`idempotency_key`]).
    pub idempotency_key: Option<String>,
    /// The values earlier calls of the flow captured, by name (`captured.NAME`); a context
    /// always holds `captured`, empty when nothing was, so `captured.x is defined` works.
    pub captured: Option<Value>,
}

pub(crate) fn booking_context(booking: &Booking) -> Value {
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
    // The same instants in UTC (`...Z`), for stagings that refuse any other offset.
    for (local, utc) in [
        ("departureDate", "departureDateUtc"),
        ("arrivalDate", "arrivalDateUtc"),
    ] {
        if let Some(instant) = flight[local]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        {
            let instant = instant.with_timezone(&Utc);
            flight[utc] = json!(instant.to_rfc3339_opts(SecondsFormat::Secs, true));
        }
    }
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

/// The context of one call.
pub(crate) fn call_context(booking: &Booking, known: &Known<'_>) -> Value {
    let mut context = booking_context(booking);
    if let Some((id, reference)) = known.quote {
        context["quote"] = json!({ "id": id, "reference": reference });
    }
    if let Some(id) = known.contract {
        context["contract"] = json!({ "id": id });
    }
    if let Some((date, day)) = &known.claim_dates {
        context["claim_date"] = json!(date);
        if let Ok(instant) = chrono::DateTime::parse_from_rfc3339(date) {
            let utc = instant.with_timezone(&Utc);
            context["claim_date_utc"] = json!(utc.to_rfc3339_opts(SecondsFormat::Secs, true));
        }
        context["claim_day"] = json!(day);
    }
    if let Some(product_type) = known.product_type {
        context["product_type"] = json!(product_type);
    }
    if let Some(key) = &known.idempotency_key {
        context["idempotency_key"] = json!(key);
    }
    context["captured"] = known.captured.clone().unwrap_or_else(|| json!({}));
    context
}

/// The idempotency key of a logical write: a UUID (version 8, RFC 9562) derived from the run,
/// the flow instance, the step and the write's place in it, so every retry of the write and a
/// `--resume` of the run send the same key, and no two writes share one.
pub(crate) fn idempotency_key(
    run_id: &str,
    flow: &str,
    step: &str,
    op: Operation,
    nth: u32,
) -> String {
    let digest = Sha256::digest(format!("{run_id}\n{flow}\n{step}\n{op}\n{nth}"));
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = crate::digest::hex(&bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// What each operation's call knows when a run or a probe makes it: the rehearsal renders
/// every template with exactly this, so a template naming anything else is refused up front.
pub(crate) fn known_for_sample(op: Operation) -> Known<'static> {
    let now = Utc::now();
    let key = Some("00000000-0000-8000-8000-000000000000".to_string());
    let quote = Some(("qt_sample", "QR-SAMPLE"));
    let contract = Some("ct_sample");
    match op {
        Operation::Quote => Known {
            idempotency_key: key,
            ..Known::default()
        },
        Operation::Subscription | Operation::Update | Operation::QuoteDeletion => Known {
            quote,
            idempotency_key: key,
            ..Known::default()
        },
        Operation::ReadContracts => Known {
            product_type: Some(crate::models::WITHDRAWAL),
            ..Known::default()
        },
        Operation::Claim => Known {
            contract,
            claim_dates: Some((
                now.to_rfc3339_opts(SecondsFormat::Secs, true),
                now.format("%Y-%m-%d").to_string(),
            )),
            product_type: Some(crate::models::WITHDRAWAL),
            idempotency_key: key,
            ..Known::default()
        },
        Operation::FlightCancellation => Known {
            quote,
            contract,
            idempotency_key: key,
            ..Known::default()
        },
    }
}

/// The context and default body each operation gets, for a generated sample booking: what a
/// run's templates will see, so [`Endpoints::rehearse`](super::Endpoints::rehearse) can
/// render them all before a run.
pub(crate) fn sample(op: Operation) -> (Value, Option<Value>) {
    let generator = crate::datagen::Generator::new(1, "SAMPLE", Utc::now(), Default::default());
    let booking = generator.booking(0);
    let context = call_context(&booking, &known_for_sample(op));
    let body = match op {
        Operation::Quote => Some(json!(Envelope {
            data: booking.quote_request(0, false)
        })),
        Operation::Subscription => Some(json!(Envelope {
            data: booking.subscription_request(&["QR-SAMPLE".to_string()])
        })),
        Operation::Update => Some(json!(Envelope {
            data: booking.update_request(&["qt_sample".to_string()])
        })),
        Operation::Claim => Some(json!(Envelope {
            data: ClaimRequest {
                beneficiary: Some(booking.beneficiary.clone()),
                ..ClaimRequest::default()
            }
        })),
        _ => None,
    };
    (context, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_instants_have_utc_forms() {
        let (context, _) = sample(Operation::Claim);
        let flight = &context["flight"];
        for (local, utc) in [
            ("departureDate", "departureDateUtc"),
            ("arrivalDate", "arrivalDateUtc"),
        ] {
            let local = chrono::DateTime::parse_from_rfc3339(flight[local].as_str().unwrap());
            let utc_text = flight[utc].as_str().unwrap();
            assert!(utc_text.ends_with('Z'), "{utc_text}");
            let utc = chrono::DateTime::parse_from_rfc3339(utc_text).unwrap();
            assert_eq!(local.unwrap(), utc);
        }
        assert!(context["claim_date_utc"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn an_idempotency_key_is_a_uuid_stable_per_write_and_distinct_between_writes() {
        let key = idempotency_key("R1", "lifecycle#1", "subscribe", Operation::Subscription, 0);
        assert_eq!(
            key,
            idempotency_key("R1", "lifecycle#1", "subscribe", Operation::Subscription, 0)
        );
        assert_eq!(key.len(), 36);
        assert_eq!(&key[14..15], "8", "version 8");
        assert!(matches!(&key[19..20], "8" | "9" | "a" | "b"), "RFC variant");
        for other in [
            idempotency_key("R2", "lifecycle#1", "subscribe", Operation::Subscription, 0),
            idempotency_key("R1", "lifecycle#2", "subscribe", Operation::Subscription, 0),
            idempotency_key("R1", "lifecycle#1", "subscribe", Operation::Subscription, 1),
        ] {
            assert_ne!(key, other);
        }
    }
}

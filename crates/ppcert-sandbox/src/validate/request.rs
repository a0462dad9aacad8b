//! The rules a request is held to on its own, before any state is consulted: exactly what the
//! sandbox refuses with 400 for its body. `ppcert proxy` holds a partner's traffic to the same
//! rules through this one entry point.

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::fields::{
    ApiFailure, Checked, check_beneficiary, check_booking_number, check_client, check_traveler,
    parse_claim_date, parse_data, parse_modification_cost, parse_parsed_data,
};
use super::quote::check_quote;
use crate::dialect::{
    ApiDialect, check_flight_status, check_parsed_flight_status, parse_parsed_request,
    parse_request,
};
use crate::models::{
    ClaimRequest, FlightCancellationReport, Operation, QuoteRequest, SubscriptionRequest, Traveler,
    UpdateRequest,
};

fn check_travelers<'a>(
    quotes: impl Iterator<Item = &'a [Traveler]>,
    now: DateTime<Utc>,
) -> Checked<()> {
    for (q, travelers) in quotes.enumerate() {
        for (t, traveler) in travelers.iter().enumerate() {
            let path = format!("data.quotes[{q}].travelers[{t}]");
            check_traveler(traveler, &path, now.fixed_offset())?;
        }
    }
    Ok(())
}

/// A request's body: its bytes, or those bytes already parsed.
#[derive(Clone, Copy)]
enum Body<'a> {
    Bytes(&'a [u8]),
    Parsed(&'a Value),
}

impl Body<'_> {
    fn data<T: DeserializeOwned>(self) -> Checked<T> {
        match self {
            Body::Bytes(bytes) => parse_data(bytes),
            Body::Parsed(value) => parse_parsed_data(value),
        }
    }

    fn request<T: DeserializeOwned>(self, dialect: ApiDialect) -> Checked<T> {
        match self {
            Body::Bytes(bytes) => parse_request(dialect, bytes),
            Body::Parsed(value) => parse_parsed_request(dialect, value),
        }
    }

    fn flight_status(self) -> Checked<()> {
        match self {
            Body::Bytes(bytes) => check_flight_status(bytes),
            Body::Parsed(value) => check_parsed_flight_status(value),
        }
    }
}

/// Checks `body` as the request of `operation` in `dialect`. `production`: the provider's
/// production refuses `claimDate`.
pub fn check_request(
    dialect: ApiDialect,
    operation: Operation,
    body: &[u8],
    now: DateTime<Utc>,
    production: bool,
) -> Checked<()> {
    check(dialect, operation, Body::Bytes(body), now, production)
}

/// [`check_request`] of a body already parsed, `body` being `serde_json::from_slice` of the
/// request's bytes: the same verdict and the same refusal, word for word, without parsing the
/// body a second time (`ppcert proxy` has parsed it for its own view).
pub fn check_parsed_request(
    dialect: ApiDialect,
    operation: Operation,
    body: &Value,
    now: DateTime<Utc>,
    production: bool,
) -> Checked<()> {
    check(dialect, operation, Body::Parsed(body), now, production)
}

fn check(
    dialect: ApiDialect,
    operation: Operation,
    body: Body<'_>,
    now: DateTime<Utc>,
    production: bool,
) -> Checked<()> {
    match operation {
        Operation::Quote => {
            let quote: QuoteRequest = body.data()?;
            if let Some(bn) = &quote.booking_number {
                check_booking_number(bn, "data.bookingNumber")?;
            }
            check_quote(&quote, now).map(|_| ())
        }
        Operation::Subscription => {
            let request: SubscriptionRequest = body.request(dialect)?;
            check_booking_number(&request.booking_number, "data.bookingNumber")?;
            check_client(&request.client, "data.client")?;
            check_travelers(request.quotes.iter().map(|q| q.travelers.as_slice()), now)
        }
        Operation::Update => {
            let request: UpdateRequest = body.request(dialect)?;
            check_client(&request.client, "data.client")?;
            check_travelers(request.quotes.iter().map(|q| q.travelers.as_slice()), now)
        }
        Operation::Claim => {
            let request: ClaimRequest = body.data()?;
            if let Some(beneficiary) = &request.beneficiary {
                check_beneficiary(beneficiary)?;
            }
            if let Some(cost) = &request.modification_cost {
                parse_modification_cost(cost)?;
            }
            match &request.claim_date {
                Some(_) if production => Err(ApiFailure::field(
                    "data.claimDate",
                    "CLAIM_DATE_UNAVAILABLE",
                    "claimDate is unavailable in production",
                )),
                Some(date) => parse_claim_date(date).map(|_| ()),
                None => Ok(()),
            }
        }
        Operation::FlightCancellation => match dialect {
            ApiDialect::Spec => {
                let report: FlightCancellationReport = body.data()?;
                check_booking_number(&report.booking_number, "data.bookingNumber")
            }
            ApiDialect::ProviderDocs => body.flight_status(),
        },
        Operation::QuoteDeletion | Operation::ReadContracts => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flight() -> Value {
        json!({"departureDate": "2099-07-01T10:00:00Z", "arrivalDate": "2099-07-01T12:00:00Z",
               "departureAirportIata": "CDG", "arrivalAirportIata": "LHR",
               "airlineIata": "AF", "number": "1234"})
    }

    fn traveler() -> Value {
        json!({"ageRange": "ADULT", "firstName": "Ada", "lastName": "Lovelace",
               "birthdate": "1980-01-01"})
    }

    /// Bodies good and bad for every operation: not an object, `data` missing or not an
    /// object, missing fields, wrong types, bad values, a large field nobody reads.
    fn bodies() -> Vec<Value> {
        let quote = json!({"data": {"currency": "EUR", "trips": [{"price": {"amount": 300.0},
            "travelers": [{"ageRange": "ADULT"}], "journeys": [{"flights": [flight()]}]}]}});
        let client = json!({"email": "a@example.com", "firstname": "A", "lastname": "B"});
        let customer =
            json!({"email": "a@example.com", "firstName": "A", "lastName": "B", "language": "en"});
        let mut out = vec![
            json!(null),
            json!([1, 2]),
            json!("text"),
            json!({}),
            json!({"data": 5}),
            json!({"data": []}),
            json!({"data": {}}),
            json!({"data": {"pad": "z".repeat(100_000)}}),
            quote.clone(),
            json!({"data": {"bookingNumber": "BK 1", "client": client, "quotes": []}}),
            json!({"data": {"bookingNumber": "BK-1", "client": client,
                "quotes": [{"id": "q", "travelers": [traveler()]}]}}),
            json!({"data": {"bookingNumber": "BK-1", "client": {"email": 5},
                "quotes": [{"id": "q", "travelers": [traveler()]}]}}),
            json!({"data": {"bookingNumber": "BK-1", "customer": customer,
                "quotes": [{"id": "q", "travelers": [{"ageRange": "ADULT", "firstName": "A",
                    "lastName": "B", "birthday": "2020-01-01"}]}]}}),
            json!({"data": {"bookingNumber": "BK-1", "customer": {"email": "x"}, "quotes": []}}),
            json!({"data": {"modificationCost": -3, "claimDate": "2027-01-01"}}),
            json!({"data": {"claimDate": "yesterday"}}),
            json!({"data": {"beneficiary": {"name": "A", "iban": "XX00", "bic": "DEUTDEFF"}}}),
            json!({"data": {"providedAt": "2027-01-01T00:00:00Z", "status": "Canceled"}}),
            json!({"data": {"providedAt": 17, "status": "Canceled"}}),
        ];
        for (path, wrong) in [
            ("currency", json!(7)),
            ("trips", json!({})),
            ("bookingNumber", json!("BK/1")),
        ] {
            let mut bad = quote.clone();
            bad["data"][path] = wrong;
            out.push(bad);
        }
        let mut no_flights = quote;
        no_flights["data"]["trips"][0]["journeys"][0]
            .as_object_mut()
            .unwrap()
            .remove("flights");
        out.push(no_flights);
        out
    }

    fn seen(result: Checked<()>) -> Option<(u16, &'static str, String, Option<String>)> {
        result
            .err()
            .map(|e| (e.status.as_u16(), e.code, e.message, e.field))
    }

    /// The proxy's single parse must not change a verdict: for every body, operation and
    /// dialect, the parsed entry point refuses exactly as the bytes one, in the same words,
    /// naming the same field.
    #[test]
    fn a_parsed_body_is_judged_exactly_as_its_bytes() {
        let now = "2026-11-27T12:00:00Z".parse().unwrap();
        let mut refusals = 0;
        for body in bodies() {
            let bytes = serde_json::to_vec(&body).unwrap();
            let parsed: Value = serde_json::from_slice(&bytes).unwrap();
            for dialect in [ApiDialect::Spec, ApiDialect::ProviderDocs] {
                for op in Operation::ALL {
                    for production in [false, true] {
                        let from_bytes = seen(check_request(dialect, op, &bytes, now, production));
                        let from_value =
                            seen(check_parsed_request(dialect, op, &parsed, now, production));
                        assert_eq!(from_bytes, from_value, "{op:?} {dialect:?} {body}");
                        refusals += usize::from(from_bytes.is_some());
                    }
                }
            }
        }
        assert!(refusals > 100, "the bodies are refused for many reasons");
    }

    /// What the bytes entry point says of a body that is not JSON, which the parsed one never
    /// sees (the proxy passes such a body's bytes).
    #[test]
    fn a_body_that_is_not_json_is_refused_with_the_parser_s_words() {
        let now = Utc::now();
        let refused = seen(check_request(
            ApiDialect::Spec,
            Operation::Quote,
            b"{\"data\": ",
            now,
            false,
        ));
        let (status, code, message, field) = refused.unwrap();
        assert_eq!((status, code, field), (400, "INVALID_JSON", None));
        assert!(message.starts_with("body is not valid JSON: EOF while parsing"));
    }
}

//! A quote request's rules (spec §2, §4.1): trips priced in the quote's currency, adult
//! travelers, and journeys of future flights that connect.

use chrono::{DateTime, FixedOffset, Utc};

use super::fields::{
    ApiFailure, Checked, check_age_range, check_currency, is_airline_code, is_airport_code,
    is_flight_number, parse_datetime,
};
use crate::models::{Flight, QuoteRequest};

/// The facts of a valid quote request the store needs.
#[derive(Clone)]
pub struct QuoteFacts {
    pub trip_total: f64,
    pub travelers: usize,
    pub flights: Vec<Flight>,
    pub first_departure: DateTime<FixedOffset>,
}

/// Every rule spec §2 and §4.1 state for a quote.
pub fn check_quote(quote: &QuoteRequest, now: DateTime<Utc>) -> Checked<QuoteFacts> {
    check_currency(&quote.currency, "data.currency")?;
    if quote.trips.is_empty() {
        return Err(ApiFailure::invalid(
            "data.trips",
            "at least one trip is required",
        ));
    }
    let mut facts = QuoteFacts {
        trip_total: 0.0,
        travelers: 0,
        flights: Vec::new(),
        first_departure: DateTime::<FixedOffset>::MAX_UTC.fixed_offset(),
    };
    for (t, trip) in quote.trips.iter().enumerate() {
        let path = format!("data.trips[{t}]");
        check_trip_price(
            trip.price.amount,
            &trip.price.currency,
            &quote.currency,
            &path,
        )?;
        facts.trip_total += trip.price.amount;
        if trip.travelers.is_empty() {
            return Err(ApiFailure::invalid(
                format!("{path}.travelers"),
                "at least one traveler is required",
            ));
        }
        for (i, traveler) in trip.travelers.iter().enumerate() {
            check_age_range(
                &traveler.age_range,
                &format!("{path}.travelers[{i}].ageRange"),
            )?;
        }
        facts.travelers = facts.travelers.max(trip.travelers.len());
        if trip.journeys.is_empty() {
            return Err(ApiFailure::invalid(
                format!("{path}.journeys"),
                "at least one journey is required",
            ));
        }
        for (j, journey) in trip.journeys.iter().enumerate() {
            let jpath = format!("{path}.journeys[{j}]");
            let first = check_journey(&journey.flights, &jpath, now)?;
            facts.first_departure = facts.first_departure.min(first);
            facts.flights.extend(journey.flights.iter().cloned());
        }
    }
    Ok(facts)
}

/// A trip price is at least one minor unit and at most a billion: below a cent is not a price,
/// and far above a billion the product price overflows when rounded to cents.
pub const TRIP_PRICE_RANGE: std::ops::RangeInclusive<f64> = 0.01..=1e9;

fn check_trip_price(amount: f64, currency: &str, quote_currency: &str, path: &str) -> Checked<()> {
    if !TRIP_PRICE_RANGE.contains(&amount) {
        return Err(ApiFailure::invalid(
            format!("{path}.price.amount"),
            "price must be between 0.01 and 1000000000",
        ));
    }
    check_currency(currency, &format!("{path}.price.currency"))?;
    if currency != quote_currency {
        return Err(ApiFailure::invalid(
            format!("{path}.price.currency"),
            format!("trip currency `{currency}` differs from quote currency `{quote_currency}`"),
        ));
    }
    Ok(())
}

/// Checks a journey's flights and returns its first departure.
fn check_journey(
    flights: &[Flight],
    path: &str,
    now: DateTime<Utc>,
) -> Checked<DateTime<FixedOffset>> {
    if flights.is_empty() {
        return Err(ApiFailure::invalid(
            format!("{path}.flights"),
            "at least one flight is required",
        ));
    }
    let mut previous_arrival: Option<DateTime<FixedOffset>> = None;
    let mut first = None;
    for (f, flight) in flights.iter().enumerate() {
        let fpath = format!("{path}.flights[{f}]");
        let (departure, arrival) = check_flight(flight, &fpath, now)?;
        if previous_arrival.is_some_and(|prev| departure < prev) {
            return Err(ApiFailure::invalid(
                format!("{fpath}.departureDate"),
                "a connecting flight departs before the previous flight arrives",
            ));
        }
        first.get_or_insert(departure);
        previous_arrival = Some(arrival);
    }
    Ok(first.expect("flights is not empty"))
}

fn check_flight(
    flight: &Flight,
    path: &str,
    now: DateTime<Utc>,
) -> Checked<(DateTime<FixedOffset>, DateTime<FixedOffset>)> {
    if !is_airline_code(&flight.airline_iata) {
        return Err(ApiFailure::invalid(
            format!("{path}.airlineIata"),
            "airlineIata must be a 2-character IATA airline code",
        ));
    }
    if !is_flight_number(&flight.number) {
        return Err(ApiFailure::invalid(
            format!("{path}.number"),
            "number must be 1-4 digits",
        ));
    }
    for (name, code) in [
        ("departureAirportIata", &flight.departure_airport_iata),
        ("arrivalAirportIata", &flight.arrival_airport_iata),
    ] {
        if !is_airport_code(code) {
            return Err(ApiFailure::invalid(
                format!("{path}.{name}"),
                format!("{name} must be a 3-letter IATA airport code"),
            ));
        }
    }
    if flight.departure_airport_iata == flight.arrival_airport_iata {
        return Err(ApiFailure::invalid(
            format!("{path}.arrivalAirportIata"),
            "arrival airport equals departure airport",
        ));
    }
    let departure = parse_datetime(&flight.departure_date, &format!("{path}.departureDate"))?;
    let arrival = parse_datetime(&flight.arrival_date, &format!("{path}.arrivalDate"))?;
    if departure <= now {
        return Err(ApiFailure::field(
            format!("{path}.departureDate"),
            "PAST_DATE",
            format!(
                "departureDate `{}` is not in the future",
                flight.departure_date
            ),
        ));
    }
    if arrival <= departure {
        return Err(ApiFailure::invalid(
            format!("{path}.arrivalDate"),
            "arrivalDate must be after departureDate",
        ));
    }
    Ok((departure, arrival))
}

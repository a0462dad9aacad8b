//! Flights and journeys: real routes, local departure times with the airport's real UTC offset
//! (DST included), and durations derived from great-circle distance.

use chrono::{DateTime, Duration, NaiveDate, NaiveTime, SecondsFormat, TimeZone, Utc};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::places::{AIRLINES, AIRPORTS, Airport, HUBS, airport, distance_km};
use crate::models::{Flight, Journey};

/// The shapes of trip a booking can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum TripShape {
    OneWay,
    Return,
    OneConnection,
}

/// A generated flight plan before it is written as API models.
pub(super) struct PlannedTrip {
    pub journeys: Vec<Journey>,
    pub distance_km: f64,
}

/// Writes an instant in an airport's local time, with the offset its clocks keep at that instant.
pub fn local_iso(at: DateTime<Utc>, airport: &Airport) -> String {
    at.with_timezone(&airport.tz)
        .fixed_offset()
        .to_rfc3339_opts(SecondsFormat::Secs, false)
}

/// Block time: cruise at about 800 km/h plus taxi and climb, rounded up to 5 minutes.
pub fn flight_duration(km: f64) -> Duration {
    let minutes = (km / 800.0 * 60.0 + 35.0).ceil() as i64;
    Duration::minutes((minutes + 4) / 5 * 5)
}

/// A departure between 06:00 and 22:55 local time on `date`; in a DST gap the clock is pushed on.
fn local_departure(rng: &mut ChaCha8Rng, airport: &Airport, date: NaiveDate) -> DateTime<Utc> {
    let time = NaiveTime::from_hms_opt(rng.random_range(6..23), rng.random_range(0..12) * 5, 0)
        .expect("valid time");
    let mut naive = date.and_time(time);
    loop {
        if let Some(at) = airport.tz.from_local_datetime(&naive).earliest() {
            return at.with_timezone(&Utc);
        }
        naive += Duration::minutes(30);
    }
}

fn pick_airline(rng: &mut ChaCha8Rng) -> &'static str {
    AIRLINES[rng.random_range(0..AIRLINES.len())].0
}

fn pick_airport(rng: &mut ChaCha8Rng, not: &[&str]) -> &'static Airport {
    loop {
        let candidate = &AIRPORTS[rng.random_range(0..AIRPORTS.len())];
        if !not.contains(&candidate.iata) {
            return candidate;
        }
    }
}

fn flight(
    rng: &mut ChaCha8Rng,
    airline: &str,
    from: &Airport,
    to: &Airport,
    departure: DateTime<Utc>,
) -> (Flight, DateTime<Utc>) {
    let arrival = departure + flight_duration(distance_km(from, to));
    let flight = Flight {
        airline_iata: airline.to_string(),
        number: rng.random_range(1..=9999u32).to_string(),
        departure_airport_iata: from.iata.to_string(),
        arrival_airport_iata: to.iata.to_string(),
        departure_date: local_iso(departure, from),
        arrival_date: local_iso(arrival, to),
    };
    (flight, arrival)
}

/// One journey from `from` to `to` leaving on `date`, direct or through a hub.
fn journey(
    rng: &mut ChaCha8Rng,
    from: &Airport,
    to: &Airport,
    date: NaiveDate,
    connect: bool,
) -> (Journey, f64) {
    let airline = pick_airline(rng);
    let departure = local_departure(rng, from, date);
    if !connect {
        let (flight, _) = flight(rng, airline, from, to, departure);
        return (
            Journey {
                flights: vec![flight],
            },
            distance_km(from, to),
        );
    }
    let hubs: Vec<&str> = HUBS
        .iter()
        .copied()
        .filter(|h| *h != from.iata && *h != to.iata)
        .collect();
    let hub = airport(hubs[rng.random_range(0..hubs.len())]).expect("hubs are in the table");
    let (first, landed) = flight(rng, airline, from, hub, departure);
    let layover = Duration::minutes(rng.random_range(12..36) * 5);
    let (second, _) = flight(rng, airline, hub, to, landed + layover);
    (
        Journey {
            flights: vec![first, second],
        },
        distance_km(from, hub) + distance_km(hub, to),
    )
}

/// A trip leaving on `date`: one-way, return 3–21 days later, or one connection.
pub(super) fn plan_trip(rng: &mut ChaCha8Rng, date: NaiveDate) -> PlannedTrip {
    let shape = match rng.random_range(0..3) {
        0 => TripShape::OneWay,
        1 => TripShape::Return,
        _ => TripShape::OneConnection,
    };
    let from = pick_airport(rng, &[]);
    let to = pick_airport(rng, &[from.iata]);
    let (outbound, km) = journey(rng, from, to, date, shape == TripShape::OneConnection);
    let mut planned = PlannedTrip {
        journeys: vec![outbound],
        distance_km: km,
    };
    if shape == TripShape::Return {
        let back = date + Duration::days(rng.random_range(3..=21));
        let (inbound, km) = journey(rng, to, from, back, false);
        planned.journeys.push(inbound);
        planned.distance_km += km;
    }
    planned
}

/// Moves every flight of the journeys by `days`, keeping each airport's local offset right.
pub(super) fn shift_journeys(journeys: &mut [Journey], days: i64) {
    for flight in journeys.iter_mut().flat_map(|j| j.flights.iter_mut()) {
        for (date, iata) in [
            (&mut flight.departure_date, &flight.departure_airport_iata),
            (&mut flight.arrival_date, &flight.arrival_airport_iata),
        ] {
            if let (Ok(at), Some(airport)) = (DateTime::parse_from_rfc3339(date), airport(iata)) {
                *date = local_iso(at.with_timezone(&Utc) + Duration::days(days), airport);
            }
        }
    }
}

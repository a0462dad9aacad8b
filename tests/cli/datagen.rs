//! Generated data is valid by construction, realistic, reproducible, and accepted by the sandbox.

use std::collections::HashSet;
use std::process::Command;

use chrono::{DateTime, Duration, TimeZone, Utc};
use ppcert::datagen::{DataProfile, Generator, Mutation, Sign, local_iso, places, run_id};
use ppcert::models::Envelope;
use ppcert::sandbox::validate;
use serde_json::json;

use crate::common::*;

fn start() -> DateTime<Utc> {
    Utc::now()
}

fn generator(seed: u64, profile: DataProfile) -> Generator {
    let start = start();
    Generator::new(seed, run_id(start, seed), start, profile)
}

#[test]
fn thousands_of_seeds_satisfy_every_spec_rule() {
    let now = Utc::now();
    let mut numbers = HashSet::new();
    for seed in 0..3000u64 {
        let plans = 1 + (seed % 3) as u32;
        let generator = generator(
            seed,
            DataProfile {
                flight_plans: plans,
                max_travelers: 4,
                ..DataProfile::default()
            },
        );
        let booking = generator.booking(seed);
        assert_eq!(booking.plans.len(), plans as usize);
        validate::check_booking_number(&booking.number, "bookingNumber").unwrap();
        assert!(
            booking.number.len() <= 32
                && booking
                    .number
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-'),
            "{}",
            booking.number
        );
        assert!(
            numbers.insert(booking.number.clone()),
            "booking numbers are unique"
        );
        validate::check_client(&booking.client, "client").unwrap();
        let domain = booking.client.email.rsplit('@').next().unwrap();
        assert!(
            ["example.com", "example.org", "example.net"].contains(&domain),
            "{}",
            booking.client.email
        );
        for plan in 0..booking.plans.len() {
            let quote = booking.quote_request(plan, false);
            let facts =
                validate::check_quote(&quote, now).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
            assert!(
                facts.first_departure > now + Duration::days(29),
                "departure at least 30 days ahead"
            );
            for (i, traveler) in booking.plans[plan].travelers.iter().enumerate() {
                validate::check_traveler(
                    traveler,
                    &format!("travelers[{i}]"),
                    facts.first_departure,
                )
                .unwrap();
                let birth =
                    chrono::NaiveDate::parse_from_str(&traveler.birthdate, "%Y-%m-%d").unwrap();
                let age = facts
                    .first_departure
                    .date_naive()
                    .years_since(birth)
                    .unwrap();
                assert!((18..=85).contains(&age), "age {age}");
            }
            let price = quote.trips[0].price.amount;
            assert_eq!((price * 100.0).round() / 100.0, price, "two decimals");
        }
        let iban = &booking.beneficiary.iban;
        assert!(
            iban.parse::<iban::Iban>().is_ok(),
            "seed {seed}: {iban} fails the iban_validate crate"
        );
        assert!(
            validate::is_bic(&booking.beneficiary.bic),
            "{}",
            booking.beneficiary.bic
        );
    }
}

#[test]
fn every_date_carries_its_airports_real_offset_and_a_distance_derived_duration() {
    use chrono::Offset;
    for seed in 0..500u64 {
        let booking = generator(seed, DataProfile::default()).booking(0);
        for flight in booking
            .plans
            .iter()
            .flat_map(|p| p.journeys.iter())
            .flat_map(|j| j.flights.iter())
        {
            let from = places::airport(&flight.departure_airport_iata).unwrap();
            let to = places::airport(&flight.arrival_airport_iata).unwrap();
            let departure = DateTime::parse_from_rfc3339(&flight.departure_date).unwrap();
            let arrival = DateTime::parse_from_rfc3339(&flight.arrival_date).unwrap();
            assert_eq!(
                *departure.offset(),
                from.tz
                    .offset_from_utc_datetime(&departure.naive_utc())
                    .fix()
            );
            assert_eq!(
                *arrival.offset(),
                to.tz.offset_from_utc_datetime(&arrival.naive_utc()).fix()
            );
            assert_eq!(
                arrival - departure,
                ppcert::datagen::flight_duration(places::distance_km(from, to))
            );
            assert!((1..=4).contains(&flight.number.len()));
        }
    }
}

#[test]
fn paris_in_july_is_plus_two_and_in_january_plus_one() {
    let paris = places::airport("CDG").unwrap();
    assert_eq!(
        local_iso(Utc.with_ymd_and_hms(2027, 7, 14, 10, 0, 0).unwrap(), paris),
        "2027-07-14T12:00:00+02:00"
    );
    assert_eq!(
        local_iso(Utc.with_ymd_and_hms(2027, 1, 14, 10, 0, 0).unwrap(), paris),
        "2027-01-14T11:00:00+01:00"
    );
    assert!(places::AIRPORTS.len() >= 60 && places::AIRLINES.len() >= 20);
}

#[test]
fn same_seed_and_start_give_identical_data_in_any_order() {
    let at = Utc.with_ymd_and_hms(2026, 12, 1, 8, 30, 0).unwrap();
    let a = Generator::new(7, run_id(at, 7), at, DataProfile::default());
    let b = Generator::new(7, run_id(at, 7), at, DataProfile::default());
    let forward: Vec<String> = (0..20)
        .map(|i| serde_json::to_string(&a.booking(i)).unwrap())
        .collect();
    let mut backward: Vec<String> = (0..20)
        .rev()
        .map(|i| serde_json::to_string(&b.booking(i)).unwrap())
        .collect();
    backward.reverse();
    assert_eq!(forward, backward);
    let other = Generator::new(8, run_id(at, 8), at, DataProfile::default());
    assert_ne!(
        serde_json::to_string(&other.booking(0)).unwrap(),
        forward[0]
    );
    assert_ne!(
        run_id(at, 7),
        run_id(at + Duration::seconds(1), 7),
        "run ids differ across runs"
    );
}

/// CI matrices start several runs against one staging in the same second, each with a random
/// seed or all with the same `--seed`: their booking numbers must not collide, or the later
/// run's subscriptions are refused 409 "booking number already sent" (the `serve-batches`
/// bench saw it once in about 3,000 batches with a 16-bit suffix).
#[test]
fn runs_started_in_the_same_second_get_distinct_run_ids() {
    let second = Utc.with_ymd_and_hms(2026, 12, 1, 8, 30, 0).unwrap();
    for same_seed in [false, true] {
        let ids: HashSet<String> = (0..3_000u64)
            .map(|i| {
                let at = second + Duration::nanoseconds((i * 333_331) as i64);
                run_id(at, if same_seed { 7 } else { i })
            })
            .collect();
        assert_eq!(ids.len(), 3_000, "same seed: {same_seed}");
    }
    // The widest booking number (the last of a million flow instances) stays within 32.
    let generator = Generator::new(7, run_id(second, 7), second, DataProfile::default());
    let widest = generator.booking_number(999_999);
    assert!(widest.len() <= 32, "{widest}");
    assert!(
        widest
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-')
    );
}

#[test]
fn generate_command_is_stable_across_runs() {
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_ppcert"))
            .args(["generate", "--seed", "7", "--count", "3"])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let first = run();
    assert_eq!(first, run());
    let parsed: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(parsed["bookings"].as_array().unwrap().len(), 3);
    assert_eq!(parsed["seed"], 7);
}

/// Age in whole years on `day`.
fn age_on(birth: chrono::NaiveDate, day: chrono::NaiveDate) -> u32 {
    day.years_since(birth).unwrap_or(0)
}

/// A staging may check age on the request day (in a time zone up to a day behind UTC) or on
/// each departure: every generated adult is 18 to 120 under every one of those readings.
#[test]
fn generate_over_many_seeds_yields_no_traveler_under_age_on_either_reading() {
    let today = Utc::now().date_naive();
    let yesterday = today - Duration::days(1);
    for seed in 0..40u64 {
        let out = Command::new(env!("CARGO_BIN_EXE_ppcert"))
            .args(["generate", "--seed", &seed.to_string(), "--count", "200"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let parsed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for booking in parsed["bookings"].as_array().unwrap() {
            for plan in booking["plans"].as_array().unwrap() {
                let departures: Vec<chrono::NaiveDate> = plan["journeys"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|j| j["flights"].as_array().unwrap().iter())
                    .map(|f| {
                        DateTime::parse_from_rfc3339(f["departureDate"].as_str().unwrap())
                            .unwrap()
                            .date_naive()
                    })
                    .collect();
                for traveler in plan["travelers"].as_array().unwrap() {
                    let birth = chrono::NaiveDate::parse_from_str(
                        traveler["birthdate"].as_str().unwrap(),
                        "%Y-%m-%d",
                    )
                    .unwrap();
                    for day in departures.iter().copied().chain([today, yesterday]) {
                        let age = age_on(birth, day);
                        assert!(
                            (18..=120).contains(&age),
                            "seed {seed}: {birth} is {age} on {day}"
                        );
                    }
                }
            }
        }
    }
}

/// Amounts carry exactly their currency's minor units: none for JPY, three for KWD.
#[test]
fn prices_are_rounded_to_the_currency_s_minor_units() {
    for (currency, units) in [("JPY", 0), ("EUR", 2), ("KWD", 3)] {
        let profile = DataProfile {
            currency: currency.to_string(),
            ..DataProfile::default()
        };
        for seed in 0..200 {
            let booking = generator(seed, profile.clone()).booking(seed);
            let scale = 10f64.powi(units);
            for plan in &booking.plans {
                assert_eq!(
                    (plan.price * scale).round() / scale,
                    plan.price,
                    "{currency} {}",
                    plan.price
                );
            }
            let update = generator(seed, profile.clone()).update(&booking, Mutation::PriceUp, 1);
            let price = update.booking.plans[0].price;
            assert_eq!((price * scale).round() / scale, price, "{currency} {price}");
        }
    }
}

#[tokio::test]
async fn the_sandbox_accepts_generated_bookings_and_multi_planning() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    for seed in 0..600u64 {
        let plans = 1 + (seed % 3) as u32;
        let booking = generator(
            seed,
            DataProfile {
                flight_plans: plans,
                ..DataProfile::default()
            },
        )
        .booking(seed);
        let mut references = Vec::new();
        for plan in 0..booking.plans.len() {
            let reply = api
                .post(
                    "/quotes",
                    &json!(Envelope {
                        data: booking.quote_request(plan, false)
                    }),
                )
                .await;
            // The seed in the message replays a refusal.
            assert_eq!(reply.status, 201, "seed {seed}: {}", reply.body);
            references.push(
                reply.body["data"]["reference"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
        let reply = api
            .post(
                "/subscriptions",
                &json!(Envelope {
                    data: booking.subscription_request(&references)
                }),
            )
            .await;
        assert_eq!(reply.status, 201, "seed {seed}: {}", reply.body);
    }
}

#[tokio::test]
async fn every_mutation_gives_the_price_delta_sign_it_announces() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    for seed in 0..100u64 {
        let generator = generator(seed, DataProfile::default());
        let booking = generator.booking(seed);
        let (_, reference) = api
            .quote_with(&json!(Envelope {
                data: booking.quote_request(0, false)
            }))
            .await;
        assert_eq!(
            api.post(
                "/subscriptions",
                &json!(Envelope {
                    data: booking.subscription_request(&[reference])
                })
            )
            .await
            .status,
            201
        );
        let mutation = Mutation::ALL[seed as usize % Mutation::ALL.len()];
        let update = generator.update(&booking, mutation, seed);
        assert_eq!(
            update.booking.number, booking.number,
            "the booking number never changes"
        );
        let reply = api
            .post(
                "/quotes",
                &json!(Envelope {
                    data: update.booking.quote_request(0, true)
                }),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let delta = reply.body["data"]["priceDelta"].as_f64().unwrap();
        assert_eq!(
            Sign::of(delta),
            update.expected_delta,
            "seed {seed} {:?}",
            update.mutation
        );
        let id = reply.body["data"]["id"].as_str().unwrap().to_string();
        let patch = api
            .send(
                "PATCH",
                &format!("/subscriptions/{}", booking.number),
                Some(&json!(Envelope {
                    data: update.booking.update_request(&[id])
                })),
            )
            .await;
        assert_eq!(patch.status, 201, "{}", patch.body);
    }
}

#[tokio::test]
async fn the_past_departure_variant_is_refused() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let booking = generator(3, DataProfile::default())
        .booking(0)
        .with_past_departure(Utc::now());
    let reply = api
        .post(
            "/quotes",
            &json!(Envelope {
                data: booking.quote_request(0, false)
            }),
        )
        .await;
    assert_eq!(
        (reply.status, reply.body["error"]["code"].as_str()),
        (400, Some("PAST_DATE")),
        "{}",
        reply.body
    );
}

//! Test data generation: valid, future-dated, reproducible bookings.
//!
//! The surface is small: a [`Generator`] (seed, run id, start instant, [`DataProfile`]) makes
//! the [`Booking`] of any index and the [`Update`] of a booking; a booking writes itself as the
//! API's requests. Same seed, run id and start give byte-identical data, whatever the order
//! bookings are asked for in.

mod flights;
mod mutate;
mod people;
pub mod places;

use chrono::{DateTime, Duration, Utc};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

pub use flights::{flight_duration, local_iso};
pub use mutate::{Mutation, Sign, Update};

use crate::models::{
    Beneficiary, Client, Flight, Journey, Money, ProductType, QuoteRequest, QuoteSelection,
    QuoteTraveler, SubscriptionRequest, Traveler, Trip, UpdateQuote, UpdateRequest, WITHDRAWAL,
};

/// What a scenario asks of its data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataProfile {
    /// First departure at least this many days after the run's start.
    pub min_days_ahead: u32,
    /// And at most this many.
    pub max_days_ahead: u32,
    /// Travelers per flight plan: 1 to this many.
    pub max_travelers: u32,
    /// Currency of every price.
    pub currency: String,
    /// Distinct flight plans per booking; 2 or more makes multi-planning bookings.
    pub flight_plans: u32,
    /// Product types each quote asks for.
    pub product_types: Vec<String>,
}

impl Default for DataProfile {
    fn default() -> Self {
        DataProfile {
            min_days_ahead: 30,
            max_days_ahead: 180,
            max_travelers: 3,
            currency: "EUR".to_string(),
            flight_plans: 1,
            product_types: vec![WITHDRAWAL.to_string()],
        }
    }
}

/// One flight plan of a booking: its journeys, the travelers flying it, and its trip price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlightPlan {
    pub price: f64,
    pub journeys: Vec<Journey>,
    pub travelers: Vec<Traveler>,
}

/// A booking as the partner would hold it; each flight plan is quoted separately.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Booking {
    pub number: String,
    pub currency: String,
    pub product_types: Vec<ProductType>,
    pub plans: Vec<FlightPlan>,
    pub client: Client,
    pub beneficiary: Beneficiary,
    /// The customer's language (BCP 47, `en-GB`), from the country the trip starts in; the
    /// provider's documented `customer` object carries it.
    #[serde(default)]
    pub language: String,
}

/// Builds bookings for one run.
#[derive(Debug, Clone)]
pub struct Generator {
    seed: u64,
    run_id: String,
    start: DateTime<Utc>,
    profile: DataProfile,
}

/// SplitMix64: spreads (seed, index) pairs over independent RNG seeds.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A run id: the start time (UTC, to the second) and four hex digits from seed and start, so
/// booking numbers differ across runs yet are reproducible from (seed, start).
pub fn run_id(start: DateTime<Utc>, seed: u64) -> String {
    let nanos = start.timestamp_nanos_opt().unwrap_or_default() as u64;
    format!(
        "{}-{:04X}",
        start.format("%y%m%d%H%M%S"),
        mix(seed ^ mix(nanos)) & 0xFFFF
    )
}

impl Generator {
    pub fn new(
        seed: u64,
        run_id: impl Into<String>,
        start: DateTime<Utc>,
        profile: DataProfile,
    ) -> Self {
        Generator {
            seed,
            run_id: run_id.into(),
            start,
            profile,
        }
    }

    fn rng(&self, index: u64, purpose: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(mix(self.seed ^ mix(index ^ mix(purpose))))
    }

    /// Booking numbers: `PP-<run id>-<index>`, `[A-Z0-9-]`, at most 32 characters.
    pub fn booking_number(&self, index: u64) -> String {
        format!("PP-{}-{index:04}", self.run_id)
    }

    /// The booking of `index`, the same whenever it is asked for.
    pub fn booking(&self, index: u64) -> Booking {
        let mut rng = self.rng(index, 1);
        let profile = &self.profile;
        let days = rng.random_range(
            profile.min_days_ahead..=profile.max_days_ahead.max(profile.min_days_ahead),
        );
        let date = (self.start + Duration::days(i64::from(days))).date_naive();
        let mut plans: Vec<FlightPlan> = Vec::new();
        while plans.len() < profile.flight_plans.max(1) as usize {
            let planned = flights::plan_trip(&mut rng, date + Duration::days(plans.len() as i64));
            let first_departure = first_departure_date(&planned.journeys).unwrap_or(date);
            let travelers: Vec<Traveler> = (0..rng.random_range(1..=profile.max_travelers.max(1)))
                .map(|_| people::adult(&mut rng, first_departure))
                .collect();
            let per_traveler = (40.0 + 0.11 * planned.distance_km) * rng.random_range(0.8..1.3);
            let price = round_cents(per_traveler * travelers.len() as f64);
            plans.push(FlightPlan {
                price,
                journeys: planned.journeys,
                travelers,
            });
        }
        let client = people::client(&mut rng, &plans[0].travelers[0]);
        let beneficiary = people::beneficiary(&mut rng, &client);
        let origin = &plans[0].journeys[0].flights[0].departure_airport_iata;
        let language = people::language_of(places::airport(origin).map_or("GB", |a| a.country));
        Booking {
            number: self.booking_number(index),
            currency: profile.currency.clone(),
            // The scenario's check refuses a name that is not a product type.
            product_types: (profile.product_types.iter())
                .filter_map(|name| ProductType::parse(name))
                .collect(),
            plans,
            client,
            beneficiary,
            language: language.to_string(),
        }
    }

    /// The booking after `mutation`, for an update quote; the same for the same inputs.
    pub fn update(&self, booking: &Booking, mutation: Mutation, index: u64) -> Update {
        mutate::apply(&mut self.rng(index, 2), booking, mutation)
    }
}

pub(crate) fn first_departure_date(journeys: &[Journey]) -> Option<chrono::NaiveDate> {
    let first = journeys.first()?.flights.first()?;
    DateTime::parse_from_rfc3339(&first.departure_date)
        .ok()
        .map(|at| at.date_naive())
}

pub(crate) fn round_cents(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

impl Booking {
    /// The quote of one flight plan; `for_update` names the booking, making it an update quote.
    pub fn quote_request(&self, plan: usize, for_update: bool) -> QuoteRequest {
        let plan = &self.plans[plan];
        let default_cover = self.product_types == [ProductType::Withdrawal];
        QuoteRequest {
            currency: self.currency.clone(),
            trips: vec![Trip {
                price: Money {
                    amount: plan.price,
                    currency: self.currency.clone(),
                },
                journeys: plan.journeys.clone(),
                travelers: plan
                    .travelers
                    .iter()
                    .map(|t| QuoteTraveler {
                        age_range: t.age_range.clone(),
                    })
                    .collect(),
            }],
            booking_number: for_update.then(|| self.number.clone()),
            product_types: (!default_cover).then(|| {
                self.product_types
                    .iter()
                    .map(|t| t.as_str().into())
                    .collect()
            }),
        }
    }

    /// The subscription, given each plan's quote reference in plan order.
    pub fn subscription_request(&self, references: &[String]) -> SubscriptionRequest {
        SubscriptionRequest {
            booking_number: self.number.clone(),
            quotes: self
                .plans
                .iter()
                .zip(references)
                .map(|(plan, reference)| QuoteSelection {
                    reference: reference.clone(),
                    travelers: plan.travelers.clone(),
                })
                .collect(),
            client: self.client.clone(),
        }
    }

    /// The PATCH body, given each plan's update quote id in plan order.
    pub fn update_request(&self, quote_ids: &[String]) -> UpdateRequest {
        UpdateRequest {
            quotes: self
                .plans
                .iter()
                .zip(quote_ids)
                .map(|(plan, id)| UpdateQuote {
                    id: id.clone(),
                    travelers: plan.travelers.clone(),
                })
                .collect(),
            client: self.client.clone(),
            booking_number: None,
        }
    }

    pub fn first_flight(&self) -> &Flight {
        &self.plans[0].journeys[0].flights[0]
    }

    pub fn travelers(&self) -> impl Iterator<Item = &Traveler> {
        self.plans.iter().flat_map(|p| p.travelers.iter())
    }

    pub fn trip_price(&self) -> f64 {
        round_cents(self.plans.iter().map(|p| p.price).sum())
    }

    /// The deliberately invalid variant: the first flight left two days before `now`.
    pub fn with_past_departure(&self, now: DateTime<Utc>) -> Booking {
        let mut past = self.clone();
        let first = first_departure_date(&past.plans[0].journeys).unwrap_or(now.date_naive());
        let days_back = (first - now.date_naive()).num_days() + 2;
        flights::shift_journeys(&mut past.plans[0].journeys, -days_back);
        past
    }
}

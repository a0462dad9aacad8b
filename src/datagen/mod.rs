//! Test data generation: valid, future-dated, reproducible bookings.
//!
//! The surface is small: a [`Generator`] (seed, run id, start instant, [`DataProfile`]) makes
//! the [`Booking`] of any index and the [`Update`] of a booking; a booking writes itself as the
//! API's requests. Same seed, run id and start give byte-identical data, whatever the order
//! bookings are asked for in.

mod booking;
mod flights;
mod mutate;
pub(crate) mod numbers;
mod pattern;
mod people;
pub mod places;

use chrono::{DateTime, Duration, Utc};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use booking::first_departure_date;
pub(crate) use booking::{Booking, FlightPlan, round_money};
pub use flights::{flight_duration, local_iso};
pub use mutate::{Mutation, Sign, Update};

use crate::models::{ProductType, Traveler, WITHDRAWAL};

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
    /// A regex every generated booking number matches (the staging's own shape); else
    /// `PP-<run id>-<index>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub booking_number_pattern: Option<String>,
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
            booking_number_pattern: None,
        }
    }
}

/// Builds bookings for one run.
#[derive(Debug, Clone)]
pub struct Generator {
    seed: u64,
    run_id: String,
    start: DateTime<Utc>,
    profile: DataProfile,
    /// The booking numbers drawn from the profile's pattern, by index.
    numbers: Option<std::sync::Arc<Vec<String>>>,
}

/// SplitMix64: spreads (seed, index) pairs over independent RNG seeds.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A run id: the start time (UTC, to the second) and eight hex digits from seed and start, so
/// booking numbers differ across runs yet are reproducible from (seed, start). Eight, not
/// four: runs started in the same second against one staging (a CI matrix, back-to-back
/// batches) collided once in 65,536 pairs with four, and the later run's bookings were refused
/// 409; eight still leave a booking number of a million flows within 32 characters.
pub fn run_id(start: DateTime<Utc>, seed: u64) -> String {
    let nanos = start.timestamp_nanos_opt().unwrap_or_default() as u64;
    format!(
        "{}-{:08X}",
        start.format("%y%m%d%H%M%S"),
        mix(seed ^ mix(nanos)) & 0xFFFF_FFFF
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
            numbers: None,
        }
    }

    /// Draws the booking numbers of `count` bookings from the profile's pattern, if it has
    /// one: distinct, and the same for the same seed.
    pub fn with_booking_numbers(mut self, count: u64) -> Result<Self, String> {
        if let Some(pattern) = &self.profile.booking_number_pattern {
            let drawn = numbers::draw(pattern, self.seed, count)?;
            self.numbers = Some(std::sync::Arc::new(drawn));
        }
        Ok(self)
    }

    fn rng(&self, index: u64, purpose: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(mix(self.seed ^ mix(index ^ mix(purpose))))
    }

    /// Booking numbers: `PP-<run id>-<index>`, `[A-Z0-9-]`, at most 32 characters, or the
    /// one drawn for `index` from the profile's pattern.
    pub fn booking_number(&self, index: u64) -> String {
        let drawn = (self.numbers.as_ref()).and_then(|n| n.get(usize::try_from(index).ok()?));
        match drawn {
            Some(number) => number.clone(),
            None => format!("PP-{}-{index:04}", self.run_id),
        }
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
                .map(|_| {
                    let on = people::age_reference_day(self.start.date_naive(), first_departure);
                    people::adult(&mut rng, on)
                })
                .collect();
            let per_traveler = (40.0 + 0.11 * planned.distance_km) * rng.random_range(0.8..1.3);
            let price = round_money(per_traveler * travelers.len() as f64, &profile.currency);
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

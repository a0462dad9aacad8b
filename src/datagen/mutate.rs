//! Booking changes for update quotes, each with the sign of `priceDelta` it must produce.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::booking::{Booking, first_departure_date, round_money};
use super::{flights, people};

/// A change to a booking that an update sends in full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mutation {
    PriceUp,
    PriceDown,
    AddTraveler,
    RemoveTraveler,
    MoveFlights,
}

impl Mutation {
    pub const ALL: [Mutation; 5] = [
        Mutation::PriceUp,
        Mutation::PriceDown,
        Mutation::AddTraveler,
        Mutation::RemoveTraveler,
        Mutation::MoveFlights,
    ];
}

/// The expected sign of the product price change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sign {
    Positive,
    Negative,
    Zero,
}

impl std::fmt::Display for Sign {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Sign::Positive => "positive",
            Sign::Negative => "negative",
            Sign::Zero => "zero",
        })
    }
}

impl Sign {
    pub fn of(value: f64) -> Sign {
        if value > 0.0 {
            Sign::Positive
        } else if value < 0.0 {
            Sign::Negative
        } else {
            Sign::Zero
        }
    }
}

/// The complete new booking, the mutation actually applied, and the delta sign it implies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Update {
    pub booking: Booking,
    pub mutation: Mutation,
    pub expected_delta: Sign,
}

/// Applies `mutation`; removing the only traveler of a plan lowers the price instead.
pub(super) fn apply(rng: &mut ChaCha8Rng, booking: &Booking, mutation: Mutation) -> Update {
    let mut booking = booking.clone();
    let mutation = match mutation {
        Mutation::RemoveTraveler if booking.plans[0].travelers.len() < 2 => Mutation::PriceDown,
        other => other,
    };
    let currency = booking.currency.clone();
    let plan = &mut booking.plans[0];
    let expected_delta = match mutation {
        Mutation::PriceUp => {
            plan.price = round_money(plan.price * rng.random_range(1.1..1.5), &currency);
            Sign::Positive
        }
        Mutation::PriceDown => {
            plan.price = round_money(plan.price * rng.random_range(0.6..0.9), &currency);
            Sign::Negative
        }
        Mutation::AddTraveler => {
            let per_traveler = plan.price / plan.travelers.len() as f64;
            let today = chrono::Utc::now().date_naive();
            let departure = first_departure_date(&plan.journeys).unwrap_or(today);
            plan.travelers.push(people::adult(
                rng,
                people::age_reference_day(today, departure),
            ));
            plan.price = round_money(plan.price + per_traveler, &currency);
            Sign::Positive
        }
        Mutation::RemoveTraveler => {
            let per_traveler = plan.price / plan.travelers.len() as f64;
            plan.travelers.pop();
            plan.price = round_money(plan.price - per_traveler, &currency);
            Sign::Negative
        }
        Mutation::MoveFlights => {
            flights::shift_journeys(&mut plan.journeys, rng.random_range(1..=7));
            Sign::Zero
        }
    };
    Update {
        booking,
        mutation,
        expected_delta,
    }
}

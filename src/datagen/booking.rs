//! A generated booking as the partner would hold it, and the requests it becomes: a quote per
//! flight plan, the subscription, the update.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::flights;

use crate::models::{
    Beneficiary, Client, Flight, Journey, Money, ProductType, QuoteRequest, QuoteSelection,
    QuoteTraveler, SubscriptionRequest, Traveler, Trip, UpdateQuote, UpdateRequest,
};

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

pub(crate) fn first_departure_date(journeys: &[Journey]) -> Option<chrono::NaiveDate> {
    let first = journeys.first()?.flights.first()?;
    DateTime::parse_from_rfc3339(&first.departure_date)
        .ok()
        .map(|at| at.date_naive())
}

/// An amount rounded to `currency`'s minor units (0 for JPY, 3 for KWD).
pub(crate) fn round_money(value: f64, currency: &str) -> f64 {
    crate::models::money::round(value, currency)
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
        round_money(self.plans.iter().map(|p| p.price).sum(), &self.currency)
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

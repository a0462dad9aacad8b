//! Quotes: pricing as a percentage of the trip, update quotes with their `priceDelta`, deletion.

use chrono::{DateTime, Utc};

use super::expiry::{QUOTE_VALIDITY_HOURS, expires_at};
use super::model::{QuoteCreated, QuoteRecord, QuoteState, Store, conflict, not_found};
use crate::models::{Operation, ProductType, QuoteRequest};
use crate::validate::{ApiFailure, Checked, QuoteFacts};

/// The product price is this share of the trip price (spec §4.5: "a percentage of it").
pub const PRODUCT_RATE: f64 = 0.05;

impl Store {
    pub fn create_quote(
        &mut self,
        quote: QuoteRequest,
        facts: QuoteFacts,
        now: DateTime<Utc>,
    ) -> Checked<QuoteCreated> {
        let product_types = product_types(quote.product_types.as_deref())?;
        // Never a free product: 5 % of a few cents would round to 0.
        let currency = quote.currency.as_str();
        let smallest = 10f64.powi(-(crate::models::money::minor_units(currency) as i32));
        let price =
            crate::models::money::round(facts.trip_total * PRODUCT_RATE, currency).max(smallest);
        // A quote naming an existing booking is an update quote (docs/design.md): it reports the
        // signed change of product price.
        let price_delta = quote
            .booking_number
            .as_ref()
            .and_then(|bn| self.bookings.get(bn))
            .map(|booking| crate::models::money::round(price - booking.price, currency));
        let (id, reference) = self.insert_quote(&quote, &facts, price, None, &product_types, now);
        self.count(Operation::Quote);
        Ok(QuoteCreated {
            id,
            reference,
            price,
            currency: quote.currency,
            product_types: product_types
                .iter()
                .map(|t| t.as_str().to_string())
                .collect(),
            booking_number: quote.booking_number,
            price_delta,
            bundle: None,
        })
    }

    /// One quote per bundle, as the provider's docs answer: each bundle its own id,
    /// reference and price (each bundle after the first costs half the base price more),
    /// counted as one quote.
    pub fn create_bundled_quotes(
        &mut self,
        quote: QuoteRequest,
        facts: QuoteFacts,
        bundles: &[String],
        now: DateTime<Utc>,
    ) -> Checked<Vec<QuoteCreated>> {
        let base = self.create_quote(quote.clone(), facts.clone(), now)?;
        // The first bundle is the quote just made; the others are made beside it, uncounted.
        let product_types: Vec<ProductType> = (base.product_types.iter())
            .filter_map(|t| ProductType::parse(t))
            .collect();
        let currency = base.currency.clone();
        let mut made = Vec::with_capacity(bundles.len());
        for (i, name) in bundles.iter().enumerate() {
            let price = crate::models::money::round(base.price * (1.0 + 0.5 * i as f64), &currency);
            let (id, reference) = if i == 0 {
                self.set_bundle(&base.id, name);
                (base.id.clone(), base.reference.clone())
            } else {
                self.insert_quote(&quote, &facts, price, Some(name), &product_types, now)
            };
            let price_delta = (quote.booking_number.as_ref())
                .and_then(|bn| self.bookings.get(bn))
                .map(|booking| crate::models::money::round(price - booking.price, &currency));
            made.push(QuoteCreated {
                id,
                reference,
                price,
                price_delta,
                bundle: Some(name.clone()),
                ..base.clone()
            });
        }
        Ok(made)
    }

    fn set_bundle(&mut self, id: &str, name: &str) {
        if let Some(record) = self.quotes.get_mut(id) {
            record.bundle = Some(name.into());
        }
    }

    /// Records an open quote; its id and reference.
    fn insert_quote(
        &mut self,
        quote: &QuoteRequest,
        facts: &QuoteFacts,
        price: f64,
        bundle: Option<&str>,
        product_types: &[ProductType],
        now: DateTime<Utc>,
    ) -> (String, String) {
        let id = self.new_id("qt_");
        let counter = self.next_id;
        let reference = self.new_id("QR-").to_uppercase();
        self.quote_ids_by_reference
            .insert(reference.clone(), id.clone());
        self.quotes.insert(
            id.clone(),
            Box::new(QuoteRecord {
                currency: quote.currency.clone(),
                price,
                travelers: facts.travelers,
                flights: serde_json::to_string(&facts.flights)
                    .unwrap_or_default()
                    .into_boxed_str(),
                first_departure: facts.first_departure,
                product_types: product_types.to_vec().into_boxed_slice(),
                booking_number: quote.booking_number.clone(),
                state: QuoteState::Open,
                created_at: now,
                bundle: bundle.map(Into::into),
            }),
        );
        self.remember_open(counter, now);
        (id, reference)
    }

    pub fn delete_quote(&mut self, id: &str, now: DateTime<Utc>) -> Checked<()> {
        if let Some(why) = self.expired(id) {
            return Err(not_found(format!("quote `{id}` {why}")));
        }
        let expired = self
            .quotes
            .get(id)
            .is_some_and(|q| q.state == QuoteState::Open && expires_at(q.created_at) <= now);
        if expired {
            return Err(not_found(format!(
                "quote `{id}` expired after {QUOTE_VALIDITY_HOURS} h"
            )));
        }
        let quote = self
            .quotes
            .get_mut(id)
            .filter(|q| q.state != QuoteState::Deleted)
            .ok_or_else(|| not_found(format!("no quote with id `{id}`")))?;
        if quote.state == QuoteState::Used {
            return Err(conflict(format!(
                "quote `{id}` is already used by a subscription"
            )));
        }
        quote.state = QuoteState::Deleted;
        self.closed_quote();
        self.remember_closed_quote(id);
        self.count(Operation::QuoteDeletion);
        Ok(())
    }
}

fn product_types(requested: Option<&[String]>) -> Checked<Vec<ProductType>> {
    let Some(requested) = requested else {
        return Ok(vec![ProductType::Withdrawal]);
    };
    if requested.is_empty() {
        return Err(ApiFailure::invalid(
            "data.productTypes",
            "productTypes may not be empty",
        ));
    }
    let mut types = Vec::new();
    for (i, name) in requested.iter().enumerate() {
        let product = ProductType::parse(name).ok_or_else(|| {
            ApiFailure::invalid(
                format!("data.productTypes[{i}]"),
                format!("unknown product type `{name}`"),
            )
        })?;
        types.push(product);
    }
    types.dedup();
    Ok(types)
}

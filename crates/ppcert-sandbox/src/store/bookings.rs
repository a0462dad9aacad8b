//! Subscriptions and updates: the quotes they name must be open, future, for this booking and
//! for as many travelers as given; each product type bought gets one contract.

use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::model::{Booking, Contract, QuoteRecord, QuoteState, Store, conflict, not_found};
use crate::models::{Client, Flight, Operation, SubscriptionRequest, Traveler, UpdateRequest};
use crate::validate::{self, ApiFailure, Checked, check_client, check_traveler};

/// The quotes a subscription or update names: by reference (subscription) or by id (update),
/// each with the travelers given for it.
struct Selection<'a> {
    by_reference: bool,
    quotes: Vec<(String, &'a [Traveler])>,
}

impl Selection<'_> {
    fn key(&self) -> &'static str {
        if self.by_reference { "reference" } else { "id" }
    }

    /// Everyone the booking covers: the travelers of each quote, in order.
    fn travelers(&self) -> Vec<Traveler> {
        self.quotes
            .iter()
            .flat_map(|(_, travelers)| travelers.iter().cloned())
            .collect()
    }
}

impl Store {
    /// The subscription as a JSON Patch of it reads it: its booking number, its quotes (each
    /// with the booking's travelers) and its client.
    pub fn subscription_document(&self, bn: &str) -> Option<Value> {
        let booking = self.bookings.get(bn)?;
        let quotes: Vec<Value> = (booking.quote_ids.iter())
            .map(|id| json!({"id": id, "travelers": booking.travelers}))
            .collect();
        Some(json!({"bookingNumber": bn, "quotes": quotes, "client": booking.client}))
    }

    /// 404 for an unknown booking; 401 once its contract is no longer valid (departure passed).
    pub fn contracts_exist(&self, bn: &str, now: DateTime<Utc>) -> Checked<()> {
        let booking = self
            .bookings
            .get(bn)
            .ok_or_else(|| not_found(format!("no contract for booking number `{bn}`")))?;
        if booking.first_departure <= now {
            return Err(ApiFailure::new(
                StatusCode::UNAUTHORIZED,
                "CONTRACT_INVALID",
                "the contract is no longer valid: departure has passed",
            ));
        }
        Ok(())
    }

    /// The first contract of a booking, as a `Location` header names it.
    pub fn first_contract_id(&self, bn: &str) -> Option<String> {
        self.bookings.get(bn)?.contract_ids.first().cloned()
    }

    pub fn subscribe(
        &mut self,
        request: SubscriptionRequest,
        now: DateTime<Utc>,
    ) -> Checked<Value> {
        let bn = request.booking_number.clone();
        validate::check_booking_number(&bn, "data.bookingNumber")?;
        check_client(&request.client, "data.client")?;
        let selection = Selection {
            by_reference: true,
            quotes: request
                .quotes
                .iter()
                .map(|q| (q.reference.clone(), q.travelers.as_slice()))
                .collect(),
        };
        let ids = self.resolve_quotes(&selection, &bn, now)?;
        if self.bookings.contains_key(&bn) {
            return Err(conflict(format!("booking number `{bn}` was already sent")));
        }
        for id in &ids {
            if let Some(bundle) = self.quotes[id].bundle.as_deref() {
                *self
                    .subscribed_bundles
                    .entry(bundle.to_string())
                    .or_default() += 1;
            }
        }
        let travelers = selection.travelers();
        let mut booking = self.booking_from_quotes(&ids, request.client, travelers, now);
        let created = self.attach_contracts(&bn, &ids, &mut booking, now);
        self.bookings.insert(bn.clone(), booking);
        self.announce_contracts(&created);
        self.remember_booking(&bn);
        self.count(Operation::Subscription);
        Ok(self.subscription_json(&bn))
    }

    /// PATCH: returns the update's summary and the price delta it applied.
    pub fn update(
        &mut self,
        bn: &str,
        request: UpdateRequest,
        now: DateTime<Utc>,
    ) -> Checked<(Value, f64)> {
        self.contracts_exist(bn, now)?;
        if request
            .booking_number
            .as_deref()
            .is_some_and(|given| given != bn)
        {
            return Err(ApiFailure::field(
                "data.bookingNumber",
                "IMMUTABLE_FIELD",
                "the booking number cannot be changed by an update",
            ));
        }
        check_client(&request.client, "data.client")?;
        let selection = Selection {
            by_reference: false,
            quotes: request
                .quotes
                .iter()
                .map(|q| (q.id.clone(), q.travelers.as_slice()))
                .collect(),
        };
        let ids = self.resolve_quotes(&selection, bn, now)?;
        let travelers = selection.travelers();
        let mut updated = self.booking_from_quotes(&ids, request.client, travelers, now);
        let booking = &self.bookings[bn];
        updated.created_at = booking.created_at;
        updated.contract_ids = booking.contract_ids.clone();
        updated.version = booking.version.wrapping_add(1);
        let delta = crate::models::money::round(updated.price - booking.price, &booking.currency);
        let created = self.attach_contracts(bn, &ids, &mut updated, now);
        self.bookings.insert(bn.to_string(), updated);
        self.announce_contracts(&created);
        self.count(Operation::Update);
        Ok((self.subscription_json(bn), delta))
    }

    /// Resolves the quotes a subscription or update names, checking each is usable and that
    /// its travelers match it. Returns the quote ids in order.
    fn resolve_quotes(
        &self,
        selection: &Selection,
        booking_number: &str,
        now: DateTime<Utc>,
    ) -> Checked<Vec<String>> {
        if selection.quotes.is_empty() {
            return Err(ApiFailure::invalid(
                "data.quotes",
                "at least one quote is required",
            ));
        }
        let mut ids: Vec<String> = Vec::new();
        for (i, (handle, travelers)) in selection.quotes.iter().enumerate() {
            let field = format!("data.quotes[{i}].{}", selection.key());
            let id = self.usable_quote(selection, handle, &field, booking_number, now)?;
            if ids.contains(&id) {
                return Err(ApiFailure::invalid(
                    &field,
                    format!("quote `{handle}` is named twice"),
                ));
            }
            check_travelers(&self.quotes[&id], travelers, i)?;
            ids.push(id);
        }
        let currency = &self.quotes[&ids[0]].currency;
        if ids.iter().any(|id| &self.quotes[id].currency != currency) {
            return Err(ApiFailure::invalid(
                "data.quotes",
                "all quotes must share one currency",
            ));
        }
        Ok(ids)
    }

    /// The id of the quote `handle` names, if it exists, is still open, belongs to no other
    /// booking and has not departed.
    fn usable_quote(
        &self,
        selection: &Selection,
        handle: &str,
        field: &str,
        booking_number: &str,
        now: DateTime<Utc>,
    ) -> Checked<String> {
        let key = selection.key();
        let id = if selection.by_reference {
            self.quote_ids_by_reference.get(handle).cloned()
        } else {
            Some(handle.to_string()).filter(|id| self.quotes.contains_key(id))
        };
        let unknown = |why: String| ApiFailure::field(field, "UNKNOWN_QUOTE", why);
        let expired = |why: String| ApiFailure::field(field, "QUOTE_EXPIRED", why);
        if let Some(why) = self.expired(handle) {
            return Err(expired(format!("quote {key} `{handle}` {why}")));
        }
        let id = id.ok_or_else(|| unknown(format!("no quote with {key} `{handle}`")))?;
        let quote = &self.quotes[&id];
        if quote.state == QuoteState::Open && super::expiry::expires_at(quote.created_at) <= now {
            return Err(expired(format!(
                "quote {key} `{handle}` expired at {} ({} h after it was made)",
                super::expiry::expires_at(quote.created_at).to_rfc3339(),
                super::expiry::QUOTE_VALIDITY_HOURS
            )));
        }
        match quote.state {
            QuoteState::Deleted => return Err(unknown(format!("quote `{handle}` was deleted"))),
            QuoteState::Used => {
                return Err(conflict(format!("quote {key} `{handle}` was already sent")));
            }
            QuoteState::Open => {}
        }
        if quote
            .booking_number
            .as_deref()
            .is_some_and(|bn| bn != booking_number)
        {
            return Err(ApiFailure::invalid(
                field,
                "quote was made for another booking",
            ));
        }
        if quote.first_departure <= now {
            return Err(ApiFailure::field(
                field,
                "PAST_DATE",
                "the quote's departure has passed",
            ));
        }
        Ok(id)
    }

    fn booking_from_quotes(
        &self,
        ids: &[String],
        client: Client,
        travelers: Vec<Traveler>,
        now: DateTime<Utc>,
    ) -> Booking {
        let quotes: Vec<&QuoteRecord> = ids.iter().map(|id| &*self.quotes[id]).collect();
        Booking {
            version: 0,
            created_at: now,
            client,
            travelers,
            quote_ids: ids.to_vec(),
            price: crate::models::money::round(
                quotes.iter().map(|q| q.price).sum(),
                &quotes[0].currency,
            ),
            currency: quotes[0].currency.clone(),
            flights: quotes
                .iter()
                .flat_map(|q| serde_json::from_str::<Vec<Flight>>(&q.flights).unwrap_or_default())
                .collect(),
            first_departure: quotes
                .iter()
                .map(|q| q.first_departure)
                .min()
                .expect("one quote at least"),
            contract_ids: Vec::new(),
        }
    }

    /// One contract per product type the quotes buy that the booking has no contract for yet;
    /// the quotes are used up. Returns the new contracts' ids.
    fn attach_contracts(
        &mut self,
        bn: &str,
        ids: &[String],
        booking: &mut Booking,
        now: DateTime<Utc>,
    ) -> Vec<String> {
        let mut created = Vec::new();
        let mut held: Vec<String> = booking
            .contract_ids
            .iter()
            .map(|id| self.contracts[id].product_type.clone())
            .collect();
        let wanted: Vec<String> = ids
            .iter()
            .flat_map(|id| {
                self.quotes[id]
                    .product_types
                    .iter()
                    .map(|t| t.as_str().to_string())
            })
            .collect();
        for product_type in wanted {
            if held.contains(&product_type) {
                continue;
            }
            let id = self.new_id("ct_");
            held.push(product_type.clone());
            self.contracts.insert(
                id.clone(),
                Contract {
                    booking_number: bn.to_string(),
                    created_at: now,
                    product_type,
                    claim: None,
                },
            );
            booking.contract_ids.push(id.clone());
            created.push(id);
        }
        for id in ids {
            let was_open = self
                .quotes
                .get_mut(id)
                .map(|quote| std::mem::replace(&mut quote.state, QuoteState::Used));
            if was_open == Some(QuoteState::Open) {
                self.closed_quote();
                self.remember_closed_quote(id);
            }
        }
        created
    }

    fn subscription_json(&self, bn: &str) -> Value {
        let booking = &self.bookings[bn];
        json!({
            "bookingNumber": bn,
            "status": "ACTIVE",
            "createdAt": booking.created_at.to_rfc3339(),
            "price": {"amount": booking.price, "currency": booking.currency},
            "quoteIds": booking.quote_ids,
            "travelers": booking.travelers.len(),
            "client": booking.client,
            "contracts": booking.contract_ids.iter().map(|id| json!({"id": id, "productType": self.contracts[id].product_type})).collect::<Vec<_>>(),
        })
    }
}

/// As many travelers as the quote was priced for, each valid on the quote's first departure.
fn check_travelers(quote: &QuoteRecord, travelers: &[Traveler], index: usize) -> Checked<()> {
    let path = format!("data.quotes[{index}].travelers");
    if travelers.len() != quote.travelers {
        return Err(ApiFailure::invalid(
            &path,
            format!(
                "quote covers {} traveler(s), {} given",
                quote.travelers,
                travelers.len()
            ),
        ));
    }
    for (t, traveler) in travelers.iter().enumerate() {
        check_traveler(traveler, &format!("{path}[{t}]"), quote.first_departure)?;
    }
    Ok(())
}

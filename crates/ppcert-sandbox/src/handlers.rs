//! HTTP handlers of the sandbox: parse, apply the store's rules, and shape the response in the
//! configured layout.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::dialect::{self, ApiDialect};
use crate::layout::{ContractsLayout, DeltaShape, Layout};
use crate::living;
use crate::models::{
    ClaimRequest, Flight, FlightCancellationReport, Journey, Money, QuoteRequest, QuoteTraveler,
    SubscriptionRequest, Trip, UpdateRequest,
};
use crate::options::SandboxOptions;
use crate::shared::Shared;
use crate::validate::{self, ApiFailure, parse_data};

/// The OpenAPI 3.1 document of exactly what the sandbox serves.
pub const OPENAPI: &str = include_str!("openapi.json");

static DOCUMENT: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| serde_json::from_str(OPENAPI).expect("openapi.json is JSON"));

pub(crate) fn reply(layout: &Layout, status: StatusCode, body: Value) -> Response {
    let body = if layout.wrap {
        json!({ "data": body })
    } else {
        body
    };
    (status, Json(body)).into_response()
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::OK)
}

fn delta_value(layout: &Layout, delta: f64, currency: &str) -> Value {
    match layout.price_delta {
        DeltaShape::Number => json!(delta),
        DeltaShape::String => json!(format!("{delta:.2}")),
        DeltaShape::Object => json!({ "amount": delta, "currency": currency }),
        DeltaShape::UnitsNanos => units_nanos(delta, currency),
    }
}

/// A price as the layout writes it: `{amount, currency}`, or Google's units and nanos.
fn price_value(layout: &Layout, amount: f64, currency: &str) -> Value {
    match layout.price_delta {
        DeltaShape::UnitsNanos => units_nanos(amount, currency),
        _ => json!({ "amount": amount, "currency": currency }),
    }
}

/// `google.type.Money`: whole units (an int64, so a JSON string) and nanos of the same sign.
fn units_nanos(amount: f64, currency: &str) -> Value {
    let cents = (amount * 100.0).round() as i64;
    json!({
        "currencyCode": currency,
        "units": (cents / 100).to_string(),
        "nanos": (cents % 100) * 10_000_000,
    })
}

pub async fn create_quote(
    State(shared): State<Arc<Shared>>,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    let quote: QuoteRequest = parse_data(&body)?;
    if let Some(bn) = &quote.booking_number {
        validate::check_booking_number(bn, "data.bookingNumber")?;
    }
    let facts = validate::check_quote(&quote, shared.now())?;
    let layout = &shared.options.layout;
    let bundles = &shared.options.quote_bundles;
    if !bundles.is_empty() {
        let made = (shared.store()).create_bundled_quotes(quote, facts, bundles, shared.now())?;
        let entries: Vec<Value> = made.iter().map(|q| bundle_entry(layout, q)).collect();
        // The provider's documented shape: `data` is the list, whatever the wrapping option.
        return Ok((StatusCode::CREATED, Json(json!({ "data": entries }))).into_response());
    }
    let created = shared.store().create_quote(quote, facts, shared.now())?;
    let mut value = json!({
        "id": created.id,
        "reference": created.reference,
        "price": price_value(layout, created.price, &created.currency),
        "productTypes": created.product_types,
    });
    if let Some(bn) = created.booking_number {
        value["bookingNumber"] = json!(bn);
    }
    if let Some(delta) = created.price_delta {
        value["priceDelta"] = delta_value(layout, delta, &created.currency);
    }
    Ok(reply(layout, StatusCode::CREATED, value))
}

/// One entry of a multi-bundle quote answer, with the T&C documents the provider's docs
/// show (`bundles`, `language`, `productType`, `url`).
fn bundle_entry(layout: &Layout, q: &crate::store::QuoteCreated) -> Value {
    let name = q.bundle.as_deref().unwrap_or_default();
    let documents: Vec<Value> = (q.product_types.iter())
        .map(|t| {
            json!({
                "bundles": [name],
                "language": "en",
                "productType": t,
                "url": format!("https://sandbox.invalid/terms/{}-{}-en.pdf", name.to_lowercase(), t.to_lowercase()),
            })
        })
        .collect();
    let mut value = json!({
        "id": q.id,
        "reference": q.reference,
        "bundle": name,
        "price": { "amount": q.price, "currency": q.currency },
        "productTypes": q.product_types,
        "documents": documents,
    });
    if let Some(delta) = q.price_delta {
        value["priceDelta"] = delta_value(layout, delta, &q.currency);
    }
    value
}

pub async fn delete_quote(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    shared.store().delete_quote(&id, shared.now())?;
    let layout = &shared.options.layout;
    if layout.delete_status == 204 {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    Ok(reply(
        layout,
        status(layout.delete_status),
        json!({ "id": id, "status": "DELETED" }),
    ))
}

/// A staging that accepts only its own booking-number shape refuses any other with a 400.
fn check_booking_pattern(options: &SandboxOptions, number: &str) -> Result<(), ApiFailure> {
    let Some(pattern) = &options.booking_number_pattern else {
        return Ok(());
    };
    let whole = regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|_| {
        ApiFailure::invalid("data.bookingNumber", "the sandbox's pattern is broken")
    })?;
    if whole.is_match(number) {
        return Ok(());
    }
    Err(ApiFailure::field(
        "data.bookingNumber",
        "INVALID_BOOKING_NUMBER",
        format!("bookingNumber `{number}` does not match ^{pattern}$"),
    ))
}

pub async fn subscribe(
    State(shared): State<Arc<Shared>>,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    let request: SubscriptionRequest = dialect::parse_request(shared.options.dialect, &body)?;
    check_booking_pattern(&shared.options, &request.booking_number)?;
    if let Some(settings) = shared.options.subscription_operations {
        return Ok(crate::operations::accepted(&shared, request, settings));
    }
    let now = shared.now();
    let booking_number = request.booking_number.clone();
    let created = shared.change(|store| store.subscribe(request, now))?;
    let created = if shared.options.contracts_delay.is_some() {
        living::without_contracts(created)
    } else {
        created
    };
    let layout = &shared.options.layout;
    if layout.location_ids {
        // The new contract is named only by where it lives, as some REST APIs answer a POST.
        let contract = shared.store().first_contract_id(&booking_number);
        let location = format!(
            "{}/contracts/{}",
            shared.options.api_prefix(),
            contract.unwrap_or_default()
        );
        return Ok((
            StatusCode::CREATED,
            [(axum::http::header::LOCATION, location)],
        )
            .into_response());
    }
    Ok(reply(layout, StatusCode::CREATED, created))
}

pub async fn update(
    State(shared): State<Arc<Shared>>,
    Path(booking_number): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    let now = shared.now();
    // An unknown booking or an expired contract is reported before the body is judged.
    shared.store().contracts_exist(&booking_number, now)?;
    let request: UpdateRequest = dialect::parse_request(shared.options.dialect, &body)?;
    let (value, delta) = shared.change(|store| {
        living::check_if_match(&shared, store, &booking_number, &headers)?;
        store.update(&booking_number, request, now)
    })?;
    let mut value = if living::contracts_hidden(&shared, &shared.store(), &booking_number, now) {
        living::without_contracts(value)
    } else {
        value
    };
    let layout = &shared.options.layout;
    let currency = value["price"]["currency"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    value["priceDelta"] = delta_value(layout, delta, &currency);
    if let Some(amount) = value["price"]["amount"].as_f64() {
        value["price"] = price_value(layout, amount, &currency);
    }
    if layout.update_status == 204 {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    Ok(reply(layout, status(layout.update_status), value))
}

pub async fn contracts(
    State(shared): State<Arc<Shared>>,
    Path(booking_number): Path<String>,
) -> Result<Response, ApiFailure> {
    let now = shared.now();
    let rules = shared.rules();
    let (contracts, etag) = {
        let mut store = shared.store();
        let mut contracts = store.contracts_of(&booking_number, now, rules)?;
        if living::contracts_hidden(&shared, &store, &booking_number, now) {
            contracts.clear();
        }
        (contracts, living::etag(&shared, &store, &booking_number))
    };
    let layout = &shared.options.layout;
    let body = match layout.contracts {
        ContractsLayout::List => Value::Array(contracts.into_iter().map(|(_, c)| c).collect()),
        ContractsLayout::ByType | ContractsLayout::Nested => {
            let mut groups = Map::new();
            for (product_type, contract) in contracts {
                let group = groups
                    .entry(product_type)
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(items) = group {
                    items.push(contract);
                }
            }
            if layout.contracts == ContractsLayout::Nested {
                json!({ "bookingNumber": booking_number, "contracts": groups })
            } else {
                Value::Object(groups)
            }
        }
    };
    Ok(living::tagged(reply(layout, StatusCode::OK, body), etag))
}

pub async fn claim(
    State(shared): State<Arc<Shared>>,
    Path(contract_id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    // A missing contract is a 404 whatever the body says.
    shared.store().contract_exists(&contract_id)?;
    let request: ClaimRequest = parse_data(&body)?;
    if shared.options.layout.claim_date_day_only
        && let Some(day) = &request.claim_date
    {
        validate::parse_date(day, "data.claimDate")?;
    }
    let now = shared.now();
    let rules = shared.rules();
    let created = shared.change(|store| store.claim(&contract_id, request, now, rules))?;
    let layout = &shared.options.layout;
    Ok(reply(layout, status(layout.claim_status), created))
}

pub async fn report_flight_cancellation(
    State(shared): State<Arc<Shared>>,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    let report: FlightCancellationReport = parse_data(&body)?;
    let created = shared.store().report_flight_cancellation(report)?;
    Ok(reply(&shared.options.layout, StatusCode::CREATED, created))
}

/// The provider's documented flight-status call: the flight by airline, number, local
/// departure date and origin; only a cancellation is reported.
pub async fn report_flight_status(
    State(shared): State<Arc<Shared>>,
    Path((airline, number, local_date, origin)): Path<(String, String, String, String)>,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    dialect::check_flight_status(&body)?;
    let day = validate::parse_date(&local_date, "localDepartureDate")?;
    let created = shared
        .store()
        .report_flight_status(&airline, &number, day, &origin)?;
    Ok(reply(&shared.options.layout, StatusCode::CREATED, created))
}

/// The document, with a quote request valid at the sandbox's `now` as the example of
/// `createQuote`: a fixed example would fall into the past, and an API fuzzer needs one
/// accepted quote to follow the links from it into deletion and beyond.
pub async fn openapi(State(shared): State<Arc<Shared>>) -> Response {
    let mut document = match shared.options.dialect {
        ApiDialect::Spec => DOCUMENT.clone(),
        ApiDialect::ProviderDocs => dialect::document(&DOCUMENT),
    };
    let server = match shared.options.api_prefix() {
        "" => "/",
        prefix => prefix,
    };
    document["servers"] = json!([{ "url": server }]);
    // Every active ISO 4217 code, from the same list the validators accept.
    document["components"]["schemas"]["Currency"]["enum"] =
        json!(crate::models::money::currency_codes());
    let example = json!({ "data": example_quote(shared.now()) });
    document["paths"]["/quotes"]["post"]["requestBody"]["content"]["application/json"]["example"] =
        example;
    Json(document).into_response()
}

/// A quote the sandbox accepts at `now`: two months out, between two airports that keep UTC
/// all year (Keflavík and Accra), so its offsets are right whatever the date.
fn example_quote(now: chrono::DateTime<chrono::Utc>) -> QuoteRequest {
    let departure = (now + chrono::Duration::days(60))
        .date_naive()
        .and_hms_opt(10, 30, 0)
        .unwrap_or_default();
    let arrival = departure + chrono::Duration::minutes(7 * 60 + 5);
    let at = |t: chrono::NaiveDateTime| t.format("%Y-%m-%dT%H:%M:%S+00:00").to_string();
    QuoteRequest {
        currency: "EUR".into(),
        trips: vec![Trip {
            price: Money {
                amount: 420.0,
                currency: "EUR".into(),
            },
            journeys: vec![Journey {
                flights: vec![Flight {
                    airline_iata: "FI".into(),
                    number: "540".into(),
                    departure_airport_iata: "KEF".into(),
                    arrival_airport_iata: "ACC".into(),
                    departure_date: at(departure),
                    arrival_date: at(arrival),
                }],
            }],
            travelers: vec![QuoteTraveler {
                age_range: crate::models::ADULT.into(),
            }],
        }],
        booking_number: None,
        product_types: None,
    }
}

pub async fn not_found() -> ApiFailure {
    ApiFailure::new(StatusCode::NOT_FOUND, "NOT_FOUND", "no such endpoint")
}

pub async fn method_not_allowed() -> ApiFailure {
    ApiFailure::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "METHOD_NOT_ALLOWED",
        "method not allowed on this endpoint",
    )
}

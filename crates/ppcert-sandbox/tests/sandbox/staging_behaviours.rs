//! The behaviours of a living staging the sandbox can take on, each an option that combines
//! with the others: claims decided after their answer, a booking-number pattern it enforces,
//! and money written as `{currencyCode, units, nanos}`.

use std::time::Duration;

use ppcert_sandbox::{DeltaShape, Layout, SandboxOptions};
use serde_json::{Value, json};

use ppcert_sandbox::testing::*;

fn claim_body() -> Value {
    let day = (chrono::Utc::now() + chrono::Duration::days(2)).format("%Y-%m-%d");
    json!({"data": {"claimDate": day.to_string()}})
}

/// The claim of `contract` in the contracts of `booking`.
async fn claim_on_read(api: &Api, booking: &str) -> Value {
    let reply = api
        .send("GET", &format!("/subscriptions/{booking}/contracts"), None)
        .await;
    reply.body["data"]["WITHDRAWAL"][0]["claim"].clone()
}

#[tokio::test]
async fn claims_decided_later_answer_without_a_status_and_show_it_on_a_later_read() {
    let sandbox = sandbox_with(SandboxOptions {
        claims_decided_after: Some(Duration::from_millis(300)),
        booking_number_pattern: Some("[A-Z]{2}[0-9]{8}".into()),
        layout: Layout {
            price_delta: DeltaShape::UnitsNanos,
            ..Layout::default()
        },
        ..fast_options()
    })
    .await;
    let api = Api::new(&sandbox);
    let contract = api.subscribe("AB12345678").await;
    let reply = api
        .post(&format!("/contracts/{contract}/claims"), &claim_body())
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert!(reply.body["data"]["id"].is_string());
    assert!(reply.body["data"].get("status").is_none(), "{}", reply.body);
    let undecided = claim_on_read(&api, "AB12345678").await;
    assert!(
        undecided["id"].is_string() && undecided.get("status").is_none(),
        "{undecided}"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let decided = claim_on_read(&api, "AB12345678").await;
    assert_eq!(decided["status"], "ACCEPTED", "{decided}");
}

#[tokio::test]
async fn a_booking_number_outside_the_pattern_is_refused_400() {
    let sandbox = sandbox_with(SandboxOptions {
        booking_number_pattern: Some("[A-Z]{2}[0-9]{8}".into()),
        ..fast_options()
    })
    .await;
    let api = Api::new(&sandbox);
    let (_, reference) = api.quote(1, 400.0).await;
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("PP-1-0001", &[(&reference, 1)]),
        )
        .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(
        reply.body["error"]["field"], "data.bookingNumber",
        "{}",
        reply.body
    );
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("XY00000001", &[(&reference, 1)]),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
}

#[tokio::test]
async fn money_in_units_and_nanos() {
    let layout = |price_delta| Layout {
        price_delta,
        ..Layout::default()
    };
    let mut answers = Vec::new();
    for shape in [DeltaShape::Number, DeltaShape::UnitsNanos] {
        let sandbox = sandbox_with(SandboxOptions {
            layout: layout(shape),
            ..fast_options()
        })
        .await;
        let api = Api::new(&sandbox);
        api.subscribe("BK-M").await;
        let mut quote = quote_body(1, 512.34, 30);
        quote["data"]["bookingNumber"] = json!("BK-M");
        answers.push(api.post("/quotes", &quote).await.body["data"].clone());
    }
    let (number, parts) = (&answers[0], &answers[1]);
    let delta = number["priceDelta"].as_f64().unwrap();
    let units: i64 = parts["priceDelta"]["units"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let nanos = parts["priceDelta"]["nanos"].as_i64().unwrap();
    assert_eq!(parts["priceDelta"]["currencyCode"], "EUR");
    assert_eq!(
        units * 100 + nanos / 10_000_000,
        (delta * 100.0).round() as i64
    );
    assert!(
        nanos % 10_000_000 == 0 && (units == 0 || nanos == 0 || units.signum() == nanos.signum())
    );
    let price = number["price"]["amount"].as_f64().unwrap();
    let units: i64 = parts["price"]["units"].as_str().unwrap().parse().unwrap();
    let nanos = parts["price"]["nanos"].as_i64().unwrap();
    assert_eq!(
        units * 100 + nanos / 10_000_000,
        (price * 100.0).round() as i64
    );
}

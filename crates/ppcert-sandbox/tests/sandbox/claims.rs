//! Claims, the 24 h rule, claim status over time, updates and flight cancellations.

use chrono::{Duration, Utc};
use ppcert_sandbox::SandboxOptions;
use ppcert_sandbox::models::Operation;
use serde_json::json;

use ppcert_sandbox::testing::*;

fn postdated(hours: i64) -> String {
    iso(Utc::now() + Duration::hours(hours))
}

fn beneficiary() -> serde_json::Value {
    json!({"name": "Ana Lopez", "iban": "DE89370400440532013000", "bic": "DEUTDEFF"})
}

async fn claim_status(api: &Api, booking: &str) -> String {
    let reply = api
        .send("GET", &format!("/subscriptions/{booking}/contracts"), None)
        .await;
    reply.body["data"]["WITHDRAWAL"][0]["claim"]["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn empty_withdrawal_claim_within_24h_is_flagged_and_a_second_claim_conflicts() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    assert_eq!(
        api.post("/contracts/ct_none/claims", &json!({"data": {}}))
            .await
            .status,
        404
    );
    let contract = api.subscribe("BK-CL1").await;
    let reply = api
        .post(
            &format!("/contracts/{contract}/claims"),
            &json!({"data": {}}),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["data"]["status"], "MANUAL_VERIFICATION_NEEDED");
    assert_eq!(
        api.post(
            &format!("/contracts/{contract}/claims"),
            &json!({"data": {}})
        )
        .await
        .status,
        409
    );
    assert_eq!(sandbox.counts()[&Operation::Claim], 1);
}

#[tokio::test]
async fn postdated_claim_with_bank_details_moves_to_refunded_over_time() {
    let sandbox = sandbox_with(SandboxOptions {
        claim_step: std::time::Duration::from_secs(3600),
        ..Default::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let contract = api.subscribe("BK-CL2").await;
    let body = json!({"data": {"claimDate": postdated(25), "beneficiary": beneficiary()}});
    let reply = api
        .post(&format!("/contracts/{contract}/claims"), &body)
        .await;
    assert_eq!(
        (reply.status, reply.body["data"]["status"].as_str()),
        (201, Some("ACCEPTED")),
        "{}",
        reply.body
    );
    assert_eq!(claim_status(&api, "BK-CL2").await, "ACCEPTED");
    sandbox.advance_clock(Duration::minutes(61));
    assert_eq!(claim_status(&api, "BK-CL2").await, "REFUNDABLE");
    sandbox.advance_clock(Duration::minutes(61));
    assert_eq!(claim_status(&api, "BK-CL2").await, "REFUNDED");
}

#[tokio::test]
async fn claim_without_bank_details_waits_in_accepted() {
    let sandbox = sandbox_with(SandboxOptions {
        claim_step: std::time::Duration::ZERO,
        ..Default::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let contract = api.subscribe("BK-CL3").await;
    let reply = api
        .post(
            &format!("/contracts/{contract}/claims"),
            &json!({"data": {"claimDate": postdated(25)}}),
        )
        .await;
    assert_eq!(reply.status, 201);
    sandbox.advance_clock(Duration::days(2));
    assert_eq!(claim_status(&api, "BK-CL3").await, "ACCEPTED");
}

#[tokio::test]
async fn claim_field_rules() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let contract = api.subscribe("BK-CL4").await;
    let path = format!("/contracts/{contract}/claims");
    let cases = [
        (json!({"claimDate": "tomorrow"}), "data.claimDate"),
        (
            json!({"claimDate": iso(Utc::now() - Duration::days(2))}),
            "data.claimDate",
        ),
        (
            json!({"beneficiary": {"name": "A", "iban": "DE89370400440532013001", "bic": "DEUTDEFF"}}),
            "data.beneficiary.iban",
        ),
        (
            json!({"beneficiary": {"name": "A", "iban": "DE89370400440532013000", "bic": "DEUT"}}),
            "data.beneficiary.bic",
        ),
        (
            json!({"productType": "CHANGE_FOR_ANY_REASON", "modificationCost": 10}),
            "data.productType",
        ),
    ];
    for (data, field) in cases {
        let reply = api.post(&path, &json!({ "data": data })).await;
        assert_eq!(
            (reply.status, reply.body["error"]["field"].as_str()),
            (400, Some(field)),
            "{data}"
        );
    }
    assert!(!sandbox.counts().contains_key(&Operation::Claim));
}

#[tokio::test]
async fn change_for_any_reason_claim_needs_cost_and_product_type() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let mut quote = quote_body(1, 400.0, 30);
    quote["data"]["productTypes"] = json!(["WITHDRAWAL", "CHANGE_FOR_ANY_REASON"]);
    let (_, reference) = api.quote_with(&quote).await;
    assert_eq!(
        api.post(
            "/subscriptions",
            &subscription_body("BK-CF", &[(&reference, 1)])
        )
        .await
        .status,
        201
    );
    let contracts = api
        .send("GET", "/subscriptions/BK-CF/contracts", None)
        .await;
    let cfar = contracts.body["data"]["CHANGE_FOR_ANY_REASON"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/contracts/{cfar}/claims");
    let reply = api.post(&path, &json!({"data": {}})).await;
    assert_eq!(
        (reply.status, reply.body["error"]["field"].as_str()),
        (400, Some("data.productType"))
    );
    let reply = api
        .post(
            &path,
            &json!({"data": {"productType": "CHANGE_FOR_ANY_REASON"}}),
        )
        .await;
    assert_eq!(
        (reply.status, reply.body["error"]["field"].as_str()),
        (400, Some("data.modificationCost"))
    );
    let reply = api.post(&path, &json!({"data": {"productType": "CHANGE_FOR_ANY_REASON", "modificationCost": "35.50", "claimDate": postdated(25)}})).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["data"]["modificationCost"].as_f64(), Some(35.5));
}

#[tokio::test]
async fn production_mode_refuses_claim_date() {
    let sandbox = sandbox_with(SandboxOptions {
        production: true,
        ..Default::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let contract = api.subscribe("BK-PROD").await;
    let reply = api
        .post(
            &format!("/contracts/{contract}/claims"),
            &json!({"data": {"claimDate": postdated(25)}}),
        )
        .await;
    assert_eq!(
        (reply.status, reply.body["error"]["code"].as_str()),
        (400, Some("CLAIM_DATE_UNAVAILABLE"))
    );
}

#[tokio::test]
async fn update_rules() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    api.subscribe("BK-U").await;
    let mut quote = quote_body(2, 900.0, 40);
    quote["data"]["bookingNumber"] = json!("BK-U");
    let (update_quote, _) = api.quote_with(&quote).await;
    let reply = api
        .send(
            "PATCH",
            "/subscriptions/BK-NONE",
            Some(&update_body(&update_quote, 2)),
        )
        .await;
    assert_eq!(reply.status, 404);
    let mut renamed = update_body(&update_quote, 2);
    renamed["data"]["bookingNumber"] = json!("BK-OTHER");
    let reply = api
        .send("PATCH", "/subscriptions/BK-U", Some(&renamed))
        .await;
    assert_eq!(
        (reply.status, reply.body["error"]["field"].as_str()),
        (400, Some("data.bookingNumber"))
    );
    let reply = api
        .send(
            "PATCH",
            "/subscriptions/BK-U",
            Some(&update_body(&update_quote, 1)),
        )
        .await;
    assert_eq!(reply.status, 400, "traveler count must match the quote");
    let reply = api
        .send(
            "PATCH",
            "/subscriptions/BK-U",
            Some(&update_body(&update_quote, 2)),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["data"]["travelers"], 2);
    assert_eq!(reply.body["data"]["priceDelta"].as_f64(), Some(25.0));
    let reply = api
        .send(
            "PATCH",
            "/subscriptions/BK-U",
            Some(&update_body(&update_quote, 2)),
        )
        .await;
    assert_eq!(reply.status, 409, "a quote is used once");
    assert_eq!(sandbox.counts()[&Operation::Update], 1);
}

#[tokio::test]
async fn update_after_departure_is_refused_as_invalid_contract() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    api.subscribe("BK-EXP").await;
    let mut quote = quote_body(1, 450.0, 60);
    quote["data"]["bookingNumber"] = json!("BK-EXP");
    let (id, _) = api.quote_with(&quote).await;
    sandbox.advance_clock(Duration::days(31));
    let reply = api
        .send("PATCH", "/subscriptions/BK-EXP", Some(&update_body(&id, 1)))
        .await;
    assert_eq!(
        (reply.status, reply.body["error"]["code"].as_str()),
        (401, Some("CONTRACT_INVALID"))
    );
}

#[tokio::test]
async fn flight_cancellation_reports() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    api.subscribe("BK-FC").await;
    let contracts = api
        .send("GET", "/subscriptions/BK-FC/contracts", None)
        .await;
    assert_eq!(contracts.status, 200);
    // The fixture's flight: AF1234 thirty days ahead, reported by its local date.
    let departure = (Utc::now() + Duration::days(30)).date_naive().to_string();
    let report = |number: &str, booking: &str| json!({"data": {"bookingNumber": booking, "airlineIata": "AF", "number": number, "departureDate": departure}});
    assert_eq!(
        api.post("/flight-cancellations", &report("999", "BK-FC"))
            .await
            .status,
        404
    );
    assert_eq!(
        api.post("/flight-cancellations", &report("1234", "BK-NONE"))
            .await
            .status,
        404
    );
    assert_eq!(
        api.post("/flight-cancellations", &report("1234", "BK-FC"))
            .await
            .status,
        201
    );
    assert_eq!(
        api.post("/flight-cancellations", &report("1234", "BK-FC"))
            .await
            .status,
        409
    );
    let missing = api
        .post(
            "/flight-cancellations",
            &json!({"data": {"bookingNumber": "BK-FC"}}),
        )
        .await;
    assert_eq!(
        (missing.status, missing.body["error"]["field"].as_str()),
        (400, Some("data.airlineIata"))
    );
    assert_eq!(sandbox.counts()[&Operation::FlightCancellation], 1);
}

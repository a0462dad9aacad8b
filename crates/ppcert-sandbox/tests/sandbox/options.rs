//! The sandbox's testing options (layout variants, faults) and its robustness.

use ppcert_sandbox::models::Operation;
use ppcert_sandbox::{ContractsLayout, DeltaShape, Layout, SandboxOptions};
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use ppcert_sandbox::testing::*;

fn with_layout(layout: Layout) -> SandboxOptions {
    SandboxOptions {
        layout,
        ..Default::default()
    }
}

#[tokio::test]
async fn unwrapped_layout_answers_bare_bodies() {
    let sandbox = sandbox_with(with_layout(Layout {
        wrap: false,
        ..Layout::default()
    }))
    .await;
    let api = Api::new(&sandbox);
    let reply = api.post("/quotes", &quote_body(1, 100.0, 30)).await;
    assert!(reply.body.get("data").is_none());
    assert!(reply.body["id"].is_string());
}

#[tokio::test]
async fn contracts_layout_variants() {
    for (layout, pointer) in [
        (ContractsLayout::ByType, "/data/WITHDRAWAL/0/id"),
        (ContractsLayout::Nested, "/data/contracts/WITHDRAWAL/0/id"),
        (ContractsLayout::List, "/data/0/id"),
    ] {
        let sandbox = sandbox_with(with_layout(Layout {
            contracts: layout,
            ..Layout::default()
        }))
        .await;
        let api = Api::new(&sandbox);
        let contract = api.subscribe("BK-L").await;
        let reply = api.send("GET", "/subscriptions/BK-L/contracts", None).await;
        assert_eq!(
            reply.body.pointer(pointer).and_then(Value::as_str),
            Some(contract.as_str()),
            "{layout:?}: {}",
            reply.body
        );
        if layout == ContractsLayout::List {
            assert_eq!(reply.body["data"][0]["productType"], "WITHDRAWAL");
        }
    }
}

#[tokio::test]
async fn update_status_delete_status_and_delta_shape_variants() {
    let layout = Layout {
        update_status: 200,
        delete_status: 202,
        price_delta: DeltaShape::Object,
        ..Layout::default()
    };
    let sandbox = sandbox_with(with_layout(layout)).await;
    let api = Api::new(&sandbox);
    api.subscribe("BK-V").await;
    let mut quote = quote_body(1, 500.0, 30);
    quote["data"]["bookingNumber"] = json!("BK-V");
    let reply = api.post("/quotes", &quote).await;
    assert_eq!(
        reply.body["data"]["priceDelta"],
        json!({"amount": 5.0, "currency": "EUR"})
    );
    let id = reply.body["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        api.send("PATCH", "/subscriptions/BK-V", Some(&update_body(&id, 1)))
            .await
            .status,
        200
    );
    let (unused, _) = api.quote(1, 100.0).await;
    assert_eq!(
        api.send("DELETE", &format!("/quotes/{unused}"), None)
            .await
            .status,
        202
    );

    let sandbox = sandbox_with(with_layout(Layout {
        price_delta: DeltaShape::String,
        ..Layout::default()
    }))
    .await;
    let api = Api::new(&sandbox);
    api.subscribe("BK-V").await;
    let reply = api.post("/quotes", &quote).await;
    assert_eq!(reply.body["data"]["priceDelta"], json!("5.00"));
}

#[tokio::test]
async fn injected_429_carries_retry_after_and_503_is_counted_per_request() {
    let sandbox = sandbox_with(SandboxOptions {
        rate_limit_every: Some(2),
        unavailable_every: Some(3),
        retry_after_secs: 7,
        ..Default::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let body = quote_body(1, 100.0, 30);
    let mut statuses = Vec::new();
    for _ in 0..6 {
        let reply = api.post("/quotes", &body).await;
        if reply.status == 429 {
            assert_eq!(reply.headers.get("retry-after").unwrap(), "7");
        }
        statuses.push(reply.status);
    }
    assert_eq!(statuses, vec![201, 429, 503, 429, 201, 429]);
    assert_eq!(
        sandbox.counts()[&Operation::Quote],
        2,
        "refused requests are not processed"
    );
}

#[tokio::test]
async fn dropped_response_is_processed_but_never_delivered() {
    let sandbox = sandbox_with(SandboxOptions {
        drop_every: Some(2),
        ..Default::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let body = quote_body(1, 100.0, 30);
    assert_eq!(api.post("/quotes", &body).await.status, 201);
    let lost = api
        .http
        .post(format!("{}/quotes", api.base))
        .header("Content-Type", "application/json")
        .header("Authorization", format!("Bearer {}", api.token))
        .body(body.to_string())
        .send()
        .await;
    let delivered = match lost {
        Ok(response) => response.bytes().await.is_ok(),
        Err(_) => false,
    };
    assert!(!delivered, "the second POST's response must be lost");
    assert_eq!(
        sandbox.counts()[&Operation::Quote],
        2,
        "the lost one was processed"
    );
}

/// The OpenAPI document declares every optional request field nullable: null must mean absent.
#[tokio::test]
async fn optional_fields_given_as_null_are_left_out() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let mut quote = quote_body(1, 300.0, 30);
    quote["data"]["bookingNumber"] = Value::Null;
    quote["data"]["productTypes"] = Value::Null;
    let reply = api.post("/quotes", &quote).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["data"]["productTypes"], json!(["WITHDRAWAL"]));
    assert!(reply.body["data"].get("priceDelta").is_none());

    let contract = api.subscribe("BK-NULLS").await;
    let claim = json!({"data": {
        "modificationCost": null, "productType": null, "claimDate": null, "beneficiary": null
    }});
    let reply = api
        .post(&format!("/contracts/{contract}/claims"), &claim)
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["data"]["status"], "MANUAL_VERIFICATION_NEEDED");
}

/// Behind a path prefix the document's server URL carries it, so a tool reading the document
/// (the CI fuzzer, a partner's code generator) finds the API where it is.
fn random_json(rng: &mut rand_chacha::ChaCha8Rng, depth: u32) -> Value {
    const KEYS: [&str; 14] = [
        "data",
        "currency",
        "trips",
        "price",
        "amount",
        "journeys",
        "flights",
        "travelers",
        "bookingNumber",
        "quotes",
        "reference",
        "client",
        "claimDate",
        "modificationCost",
    ];
    match rng.random_range(0..if depth == 0 { 4 } else { 7 }) {
        0 => Value::Null,
        1 => json!(rng.random_bool(0.5)),
        2 => json!(rng.random_range(-1e12..1e12)),
        3 => json!(
            [
                "",
                "EUR",
                "ADULT",
                "2099-01-01T00:00:00Z",
                "x\u{0}\u{ffff}",
                "-1",
                "AF"
            ][rng.random_range(0..7)]
        ),
        4 | 5 => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.random_range(0..5) {
                map.insert(
                    KEYS[rng.random_range(0..KEYS.len())].to_string(),
                    random_json(rng, depth - 1),
                );
            }
            Value::Object(map)
        }
        _ => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| random_json(rng, depth - 1))
                .collect(),
        ),
    }
}

#[tokio::test]
async fn arbitrary_json_never_gets_a_5xx() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let contract = api.subscribe("BK-FUZZ").await;
    let paths = [
        ("POST", "/quotes".to_string()),
        ("POST", "/subscriptions".to_string()),
        ("PATCH", "/subscriptions/BK-FUZZ".to_string()),
        ("POST", format!("/contracts/{contract}/claims")),
        ("POST", "/flight-cancellations".to_string()),
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
    for i in 0..1500 {
        let mut body = random_json(&mut rng, 4);
        if i % 2 == 0 {
            body = json!({ "data": body });
        }
        let (method, path) = &paths[i % paths.len()];
        let reply = api.send(method, path, Some(&body)).await;
        assert!(
            reply.status < 500,
            "{method} {path} {body} -> {}",
            reply.status
        );
    }
}

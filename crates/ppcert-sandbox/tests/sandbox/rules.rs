//! The sandbox enforces every rule of the spec, through HTTP.

use serde_json::{Value, json};

use ppcert_sandbox::testing::*;

#[tokio::test]
async fn auth_requires_the_exact_bearer_token() {
    let sandbox = sandbox().await;
    let mut api = Api::new(&sandbox);
    let body = quote_body(1, 300.0, 30);
    let token = api.token.clone();
    for wrong in ["", "nope", &format!("{token}x")] {
        api.token = wrong.to_string();
        let reply = api.post("/quotes", &body).await;
        assert_eq!(reply.status, 401, "token {wrong:?}");
        assert_eq!(reply.body["error"]["code"], "UNAUTHORIZED");
    }
    let raw = ppcert_sandbox::testing::http_client()
        .post(format!("{}/quotes", api.base))
        .header("Content-Type", "application/json")
        .header("Authorization", format!("bearer {token}"))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(
        raw.status(),
        401,
        "scheme is case-sensitive as the spec writes it"
    );
    api.token = token;
    assert_eq!(api.post("/quotes", &body).await.status, 201);
    assert_eq!(
        sandbox
            .counts()
            .get(&ppcert_sandbox::models::Operation::Quote),
        Some(&1)
    );
}

#[tokio::test]
async fn bodies_must_be_json_under_data() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let bare = quote_body(1, 300.0, 30)["data"].clone();
    let reply = api.post("/quotes", &bare).await;
    assert_eq!(
        (reply.status, reply.body["error"]["field"].as_str()),
        (400, Some("data"))
    );
    let raw = api
        .http
        .post(format!("{}/quotes", api.base))
        .header("Content-Type", "application/json")
        .header("Authorization", format!("Bearer {}", api.token))
        .body("{\"data\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 400);
    let text = api
        .http
        .post(format!("{}/quotes", api.base))
        .header("Content-Type", "text/plain")
        .header("Authorization", format!("Bearer {}", api.token))
        .body(quote_body(1, 1.0, 30).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(text.status(), 415);
}

/// Applies `edit` to a valid quote body and expects a 400 naming `field`.
async fn expect_quote_refused(api: &Api, field: &str, edit: impl FnOnce(&mut Value)) -> Value {
    let mut body = quote_body(1, 300.0, 30);
    edit(&mut body);
    let reply = api.post("/quotes", &body).await;
    assert_eq!(reply.status, 400, "{field}: {}", reply.body);
    assert_eq!(reply.body["error"]["field"], field, "{}", reply.body);
    reply.body
}

#[tokio::test]
async fn quote_field_rules() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let f = "data.trips[0].journeys[0].flights[0]";
    let past = expect_quote_refused(&api, &format!("{f}.departureDate"), |b| {
        b["data"]["trips"][0]["journeys"][0]["flights"][0] = flight(-1);
    })
    .await;
    assert_eq!(past["error"]["code"], "PAST_DATE");
    expect_quote_refused(&api, &format!("{f}.departureDate"), |b| {
        b["data"]["trips"][0]["journeys"][0]["flights"][0]["departureDate"] =
            json!("2099-07-01T10:00:00");
    })
    .await;
    expect_quote_refused(&api, &format!("{f}.arrivalDate"), |b| {
        let flight = &mut b["data"]["trips"][0]["journeys"][0]["flights"][0];
        flight["arrivalDate"] = flight["departureDate"].clone();
    })
    .await;
    expect_quote_refused(&api, &format!("{f}.departureAirportIata"), |b| {
        b["data"]["trips"][0]["journeys"][0]["flights"][0]["departureAirportIata"] = json!("Paris");
    })
    .await;
    expect_quote_refused(&api, &format!("{f}.airlineIata"), |b| {
        b["data"]["trips"][0]["journeys"][0]["flights"][0]["airlineIata"] = json!("AFR");
    })
    .await;
    expect_quote_refused(&api, &format!("{f}.number"), |b| {
        b["data"]["trips"][0]["journeys"][0]["flights"][0]["number"] = json!("12345");
    })
    .await;
    for amount in [json!(0), json!(0.001), json!(1.5e9), json!(1e308)] {
        expect_quote_refused(&api, "data.trips[0].price.amount", |b| {
            b["data"]["trips"][0]["price"]["amount"] = amount.clone()
        })
        .await;
    }
    expect_quote_refused(&api, "data.trips[0].price.amount", |b| {
        b["data"]["trips"][0]["price"]["amount"] = json!("12")
    })
    .await;
    expect_quote_refused(&api, "data.currency", |b| {
        b["data"]["currency"] = json!("EURO")
    })
    .await;
    expect_quote_refused(&api, "data.trips[0].travelers[0].ageRange", |b| {
        b["data"]["trips"][0]["travelers"][0]["ageRange"] = json!("CHILD");
    })
    .await;
    expect_quote_refused(&api, &format!("{f}.arrivalAirportIata"), |b| {
        b["data"]["trips"][0]["journeys"][0]["flights"][0]
            .as_object_mut()
            .unwrap()
            .remove("arrivalAirportIata");
    })
    .await;
    assert!(sandbox.counts().is_empty(), "no refused quote is counted");
}

/// 5 % of a one-cent trip rounds to nothing; the product still costs a cent (the OpenAPI
/// document promises a price above 0, and the CI fuzzer found the 0).
#[tokio::test]
async fn the_cheapest_trip_still_buys_a_product_that_costs_a_cent() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let reply = api.post("/quotes", &quote_body(1, 0.01, 30)).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["data"]["price"]["amount"], json!(0.01));
}

#[tokio::test]
async fn quote_is_priced_as_a_percentage_with_distinct_id_and_reference() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let reply = api.post("/quotes", &quote_body(2, 400.0, 30)).await;
    assert_eq!(reply.status, 201);
    let data = &reply.body["data"];
    assert_ne!(data["id"], data["reference"]);
    assert_eq!(
        data["price"]["amount"].as_f64(),
        Some(400.0 * ppcert_sandbox::PRODUCT_RATE)
    );
    assert!(
        data.get("priceDelta").is_none(),
        "a new booking's quote has no delta"
    );
}

#[tokio::test]
async fn update_quote_reports_signed_price_delta() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    api.subscribe("BK-DELTA").await;
    for (price, sign) in [(600.0, 1.0), (200.0, -1.0)] {
        let mut body = quote_body(1, price, 30);
        body["data"]["bookingNumber"] = json!("BK-DELTA");
        let reply = api.post("/quotes", &body).await;
        assert_eq!(reply.status, 201);
        let delta = reply.body["data"]["priceDelta"].as_f64().unwrap();
        assert_eq!(delta, (price - 400.0) * ppcert_sandbox::PRODUCT_RATE);
        assert_eq!(delta.signum(), sign);
    }
}

#[tokio::test]
async fn subscription_rules() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let (_, reference) = api.quote(2, 500.0).await;
    let mut missing = subscription_body("BK-S1", &[(&reference, 2)]);
    missing["data"]["client"]
        .as_object_mut()
        .unwrap()
        .remove("email");
    let reply = api.post("/subscriptions", &missing).await;
    assert_eq!(
        (reply.status, reply.body["error"]["field"].as_str()),
        (400, Some("data.client.email"))
    );
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("BK-S1", &[(&reference, 1)]),
        )
        .await;
    assert_eq!(
        (reply.status, reply.body["error"]["field"].as_str()),
        (400, Some("data.quotes[0].travelers"))
    );
    let mut minor = subscription_body("BK-S1", &[(&reference, 2)]);
    minor["data"]["quotes"][0]["travelers"][1]["birthdate"] =
        json!(chrono::Utc::now().date_naive().to_string());
    let reply = api.post("/subscriptions", &minor).await;
    assert_eq!(
        (reply.status, reply.body["error"]["field"].as_str()),
        (400, Some("data.quotes[0].travelers[1].birthdate"))
    );
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("BK-S1", &[(&reference, 2)]),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let reused_reference = api
        .post(
            "/subscriptions",
            &subscription_body("BK-S2", &[(&reference, 2)]),
        )
        .await;
    assert_eq!(reused_reference.status, 409);
    let (_, fresh) = api.quote(1, 100.0).await;
    let reused_booking = api
        .post(
            "/subscriptions",
            &subscription_body("BK-S1", &[(&fresh, 1)]),
        )
        .await;
    assert_eq!(reused_booking.status, 409);
    assert_eq!(
        sandbox.counts()[&ppcert_sandbox::models::Operation::Subscription],
        1
    );
}

#[tokio::test]
async fn a_subscription_takes_each_open_quote_of_its_own_booking_once() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let refusal = |reply: &Reply| {
        (
            reply.status,
            reply.body["error"]["code"].as_str().map(str::to_string),
            reply.body["error"]["field"].as_str().map(str::to_string),
        )
    };
    let expect = |code: &str, field: &str| (400, Some(code.to_string()), Some(field.to_string()));
    let (_, twice) = api.quote(1, 100.0).await;
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("BK-T1", &[(&twice, 1), (&twice, 1)]),
        )
        .await;
    assert_eq!(
        refusal(&reply),
        expect("INVALID_FIELD", "data.quotes[1].reference")
    );
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("BK-T1", &[(&twice, 1), ("qr-never-made", 1)]),
        )
        .await;
    assert_eq!(
        refusal(&reply),
        expect("UNKNOWN_QUOTE", "data.quotes[1].reference")
    );
    let (deleted_id, deleted) = api.quote(1, 100.0).await;
    let gone = api
        .send("DELETE", &format!("/quotes/{deleted_id}"), None)
        .await;
    assert_eq!(gone.status, 204);
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("BK-T1", &[(&deleted, 1)]),
        )
        .await;
    assert_eq!(
        refusal(&reply),
        expect("UNKNOWN_QUOTE", "data.quotes[0].reference")
    );
    api.subscribe("BK-OTHER").await;
    let mut for_other = quote_body(1, 100.0, 30);
    for_other["data"]["bookingNumber"] = json!("BK-OTHER");
    let (_, other) = api.quote_with(&for_other).await;
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("BK-T1", &[(&other, 1)]),
        )
        .await;
    assert_eq!(
        refusal(&reply),
        expect("INVALID_FIELD", "data.quotes[0].reference")
    );
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("BK-T1", &[(&twice, 1)]),
        )
        .await;
    assert_eq!(
        reply.status, 201,
        "the refusals used nothing up: {}",
        reply.body
    );
}

#[tokio::test]
async fn multi_planning_subscription_carries_each_quote_with_its_travelers() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let (_, first) = api.quote(2, 500.0).await;
    let (_, second) = api.quote(1, 300.0).await;
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("BK-MP", &[(&first, 2), (&second, 1)]),
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(reply.body["data"]["travelers"], 3);
    assert_eq!(reply.body["data"]["price"]["amount"].as_f64(), Some(40.0));
}

#[tokio::test]
async fn concurrent_subscriptions_with_one_booking_number_create_exactly_one() {
    let sandbox = sandbox().await;
    let api = std::sync::Arc::new(Api::new(&sandbox));
    let mut references = Vec::new();
    for _ in 0..12 {
        references.push(api.quote(1, 200.0).await.1);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for reference in references {
        let api = api.clone();
        tasks.spawn(async move {
            api.post(
                "/subscriptions",
                &subscription_body("BK-RACE", &[(&reference, 1)]),
            )
            .await
            .status
        });
    }
    let statuses: Vec<u16> = tasks.join_all().await;
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 409).count(),
        11,
        "{statuses:?}"
    );
}

#[tokio::test]
async fn contracts_are_grouped_by_product_type_and_show_the_claim() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    assert_eq!(
        api.send("GET", "/subscriptions/NOPE/contracts", None)
            .await
            .status,
        404
    );
    let contract = api.subscribe("BK-C").await;
    let reply = api.send("GET", "/subscriptions/BK-C/contracts", None).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["data"]["WITHDRAWAL"][0]["id"], contract.as_str());
    assert!(reply.body["data"]["WITHDRAWAL"][0].get("claim").is_none());
    assert_eq!(
        api.post(
            &format!("/contracts/{contract}/claims"),
            &json!({"data": {}})
        )
        .await
        .status,
        201
    );
    let reply = api.send("GET", "/subscriptions/BK-C/contracts", None).await;
    assert_eq!(
        reply.body["data"]["WITHDRAWAL"][0]["claim"]["status"],
        "MANUAL_VERIFICATION_NEEDED"
    );
}

#[tokio::test]
async fn quote_deletion_rules() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let (id, _) = api.quote(1, 100.0).await;
    assert_eq!(
        api.send("DELETE", &format!("/quotes/{id}"), None)
            .await
            .status,
        204
    );
    assert_eq!(
        api.send("DELETE", &format!("/quotes/{id}"), None)
            .await
            .status,
        404,
        "deleted twice"
    );
    assert_eq!(
        api.send("DELETE", "/quotes/qt_unknown", None).await.status,
        404
    );
    let (used_id, reference) = api.quote(1, 100.0).await;
    assert_eq!(
        api.post(
            "/subscriptions",
            &subscription_body("BK-D", &[(&reference, 1)])
        )
        .await
        .status,
        201
    );
    assert_eq!(
        api.send("DELETE", &format!("/quotes/{used_id}"), None)
            .await
            .status,
        409
    );
    let gone = api
        .post(
            "/subscriptions",
            &subscription_body("BK-D2", &[(&reference, 1)]),
        )
        .await;
    assert_eq!(gone.status, 409);
    assert_eq!(
        sandbox.counts()[&ppcert_sandbox::models::Operation::QuoteDeletion],
        1
    );
}

#[tokio::test]
async fn unknown_paths_and_methods_answer_json_errors() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let reply = api.send("GET", "/nothing-here", None).await;
    assert_eq!(
        (reply.status, reply.body["error"]["code"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    assert_eq!(
        api.send("PUT", "/quotes", Some(&json!({}))).await.status,
        405
    );
}

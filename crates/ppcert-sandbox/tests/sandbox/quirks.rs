//! How a gateway-fronted staging wants to be called (`Quirks`): routes only with a trailing
//! slash (the bare path redirected), date-times only as `Z` instants, the flight-cancellation
//! report as `PUT /bookings/{bookingNumber}/flight-status`; and what the sandbox counted.

use ppcert_sandbox::testing::*;
use ppcert_sandbox::{Quirks, SandboxOptions};
use serde_json::{Value, json};

fn with(quirks: Quirks) -> SandboxOptions {
    SandboxOptions {
        quirks,
        ..fast_options()
    }
}

#[tokio::test]
async fn bare_paths_are_redirected_to_the_slashed_ones_which_are_served() {
    let sandbox = sandbox_with(SandboxOptions {
        path_prefix: Some("/partner-api".into()),
        ..with(Quirks {
            trailing_slash: true,
            ..Quirks::default()
        })
    })
    .await;
    let _ = http_client(); // installs the TLS provider reqwest needs
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let send = |method: reqwest::Method, path: &str| {
        client
            .request(method, format!("{}{path}", sandbox.base_url()))
            .bearer_auth(sandbox.token())
            .header("Content-Type", "application/json")
            .body(quote_body(1, 100.0, 30).to_string())
            .send()
    };
    let bare = send(reqwest::Method::POST, "/quotes?lang=en")
        .await
        .unwrap();
    assert_eq!(bare.status(), 308);
    assert_eq!(bare.headers()["location"], "/partner-api/quotes/?lang=en");
    let slashed = send(reqwest::Method::POST, "/quotes/").await.unwrap();
    assert_eq!(slashed.status(), 201);
    let answer: Value = serde_json::from_str(&slashed.text().await.unwrap()).unwrap();
    let id = answer["data"]["id"].as_str().unwrap();
    let deleted = send(reqwest::Method::DELETE, &format!("/quotes/{id}/"))
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let document = client.get(sandbox.openapi_url()).send().await.unwrap();
    assert_eq!(document.status(), 200);
    let seen = sandbox.quirks_seen();
    assert_eq!((seen.redirected, seen.slashed), (1, 2), "{seen:?}");
}

#[tokio::test]
async fn a_date_time_with_an_offset_is_refused_naming_its_field() {
    let sandbox = sandbox_with(with(Quirks {
        utc_only: true,
        ..Quirks::default()
    }))
    .await;
    let api = Api::new(&sandbox);
    // `iso` writes `+00:00`: the same instant, but not the `Z` this staging takes.
    let mut body = quote_body(1, 100.0, 30);
    let refused = api.post("/quotes", &body).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    let field = refused.body["error"]["field"].as_str().unwrap();
    assert!(
        field.starts_with("data.trips[0].journeys[0].flights[0].") && field.ends_with("Date"),
        "{field}"
    );
    let flight = &mut body["data"]["trips"][0]["journeys"][0]["flights"][0];
    for key in ["departureDate", "arrivalDate"] {
        let z = flight[key].as_str().unwrap().replace("+00:00", "Z");
        flight[key] = json!(z);
    }
    api.quote_with(&body).await;
    assert_eq!(sandbox.quirks_seen().not_utc, 1);
}

#[tokio::test]
async fn the_flight_cancellation_is_a_put_of_the_bookings_flight_status() {
    let sandbox = sandbox_with(with(Quirks {
        flight_status_put: true,
        ..Quirks::default()
    }))
    .await;
    let api = Api::new(&sandbox);
    let body = quote_body(1, 400.0, 30);
    let departure = body["data"]["trips"][0]["journeys"][0]["flights"][0]["departureDate"].clone();
    let (_, reference) = api.quote_with(&body).await;
    let subscribed = api
        .post(
            "/subscriptions",
            &subscription_body("BK-PUT-1", &[(&reference, 1)]),
        )
        .await;
    assert_eq!(subscribed.status, 201, "{}", subscribed.body);
    let report = |status: &str| {
        json!({"data": {"airlineIata": "AF", "number": "1234", "departureDate": departure,
            "status": status}})
    };
    let path = "/bookings/BK-PUT-1/flight-status";
    let wrong = api.send("PUT", path, Some(&report("Canceled"))).await;
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    assert_eq!(wrong.body["error"]["field"], "data.status");
    let put = api.send("PUT", path, Some(&report("CANCELLED"))).await;
    assert_eq!(put.status, 200, "{}", put.body);
    assert_eq!(put.body["data"]["bookingNumber"], "BK-PUT-1");
    let again = api.send("PUT", path, Some(&report("CANCELLED"))).await;
    assert_eq!(again.status, 409, "{}", again.body);
    let spec_call = api
        .post("/flight-cancellations", &report("CANCELLED"))
        .await;
    assert_eq!(spec_call.status, 404);
    assert_eq!(sandbox_counts(&sandbox)["flight_cancellation"], 1);
    assert_eq!(sandbox.quirks_seen().flight_status_puts, 3);
}

//! A staging that lives behind a gateway: contracts listed only after a delay, and updates
//! that need `If-Match` with the `ETag` of the contracts read. Each an option, combinable.

use std::time::Duration;

use ppcert_sandbox::SandboxOptions;
use ppcert_sandbox::testing::*;
use serde_json::Value;

fn listed(reply: &Reply) -> usize {
    reply.body["data"]["WITHDRAWAL"]
        .as_array()
        .map_or(0, Vec::len)
}

/// Quote and subscribe `booking` without reading the answer's contracts; the quote's id.
async fn subscribe(api: &Api, booking: &str) -> (String, Reply) {
    let (id, reference) = api.quote(1, 400.0).await;
    let body = subscription_body(booking, &[(&reference, 1)]);
    let reply = api.post("/subscriptions", &body).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    (id, reply)
}

#[tokio::test]
async fn contracts_appear_only_after_the_delay_and_the_subscription_names_none() {
    let sandbox = sandbox_with(SandboxOptions {
        contracts_delay: Some(Duration::from_millis(400)),
        ..Default::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let (_, subscribed) = subscribe(&api, "BK-LAG1").await;
    assert!(
        subscribed.body["data"].get("contracts").is_none(),
        "{}",
        subscribed.body
    );
    let early = api
        .send("GET", "/subscriptions/BK-LAG1/contracts", None)
        .await;
    assert_eq!(early.status, 200, "{}", early.body);
    assert_eq!(listed(&early), 0, "not listed yet: {}", early.body);
    // Asked again until listed, within a bound far beyond the delay: it does appear.
    let mut later = early;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        later = api
            .send("GET", "/subscriptions/BK-LAG1/contracts", None)
            .await;
        if listed(&later) > 0 {
            break;
        }
    }
    assert_eq!(listed(&later), 1, "{}", later.body);
}

async fn patch(api: &Api, booking: &str, quote: &str, if_match: Option<&str>) -> Reply {
    let mut request = api
        .http
        .patch(format!("{}/subscriptions/{booking}", api.base))
        .header("Content-Type", "application/json")
        .header("Authorization", format!("Bearer {}", api.token))
        .body(update_body(quote, 1).to_string());
    if let Some(tag) = if_match {
        request = request.header("If-Match", tag);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let body = serde_json::from_str(&response.text().await.unwrap()).unwrap_or(Value::Null);
    Reply {
        status,
        body,
        headers: Default::default(),
    }
}

fn etag(reply: &Reply) -> String {
    reply.headers["etag"].to_str().unwrap().to_string()
}

#[tokio::test]
async fn an_update_needs_the_current_etag_428_without_412_when_stale() {
    let sandbox = sandbox_with(SandboxOptions {
        require_if_match: true,
        ..Default::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let (_, _) = subscribe(&api, "BK-TAG1").await;
    let read = api
        .send("GET", "/subscriptions/BK-TAG1/contracts", None)
        .await;
    let first = etag(&read);
    let (quote, _) = api.quote(1, 420.0).await;
    let missing = patch(&api, "BK-TAG1", &quote, None).await;
    assert_eq!(missing.status, 428, "{}", missing.body);
    assert!(
        missing.body.to_string().contains("If-Match"),
        "{}",
        missing.body
    );
    let wrong = patch(&api, "BK-TAG1", &quote, Some("\"nope\"")).await;
    assert_eq!(wrong.status, 412, "{}", wrong.body);
    let updated = patch(&api, "BK-TAG1", &quote, Some(&first)).await;
    assert!(updated.status < 300, "{}", updated.body);
    // The update changed the booking: its ETag changed, and the old one is stale.
    let again = api
        .send("GET", "/subscriptions/BK-TAG1/contracts", None)
        .await;
    assert_ne!(etag(&again), first);
    let (quote, _) = api.quote(1, 440.0).await;
    let stale = patch(&api, "BK-TAG1", &quote, Some(&first)).await;
    assert_eq!(stale.status, 412, "{}", stale.body);
    let fresh = patch(&api, "BK-TAG1", &quote, Some(&etag(&again))).await;
    assert!(fresh.status < 300, "{}", fresh.body);
}

#[tokio::test]
async fn without_the_options_no_etag_is_sent_or_needed() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    let (_, subscribed) = subscribe(&api, "BK-TAG2").await;
    assert!(subscribed.body["data"]["contracts"][0]["id"].is_string());
    let read = api
        .send("GET", "/subscriptions/BK-TAG2/contracts", None)
        .await;
    assert!(read.headers.get("etag").is_none());
    let (quote, _) = api.quote(1, 420.0).await;
    assert!(patch(&api, "BK-TAG2", &quote, None).await.status < 300);
}

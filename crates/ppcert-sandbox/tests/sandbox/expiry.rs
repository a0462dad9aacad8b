//! The sandbox keeps bounded memory: an unused quote expires 72 h after it was made (by the
//! sandbox's clock) or when more than `max_open_quotes` unused quotes are held, oldest first; a
//! quote used after that is refused saying it expired, and when.

use ppcert_sandbox::SandboxOptions;

use ppcert_sandbox::testing::*;

#[tokio::test]
async fn a_quote_used_after_its_72_hours_is_refused_saying_when_it_expired() {
    let sandbox = sandbox().await;
    let api = Api::new(&sandbox);
    // Departures 30 days out: the quote expires long before its flight.
    let (_, reference) = api.quote(1, 400.0).await;
    let (kept_id, _) = api.quote(1, 400.0).await;
    sandbox.advance_clock(chrono::Duration::hours(71));
    let (fresh_id, _) = api.quote(1, 400.0).await;
    sandbox.advance_clock(chrono::Duration::hours(2));
    let reply = api
        .post(
            "/subscriptions",
            &subscription_body("PP-EXPIRY-1", &[(&reference, 1)]),
        )
        .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.body["error"]["code"], "QUOTE_EXPIRED");
    let message = reply.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("expired at") && message.contains("72 h"),
        "{message}"
    );
    let deleted = api
        .send("DELETE", &format!("/quotes/{kept_id}"), None)
        .await;
    assert_eq!(deleted.status, 404, "{}", deleted.body);
    assert!(
        deleted.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired")
    );
    let fresh = api
        .send("DELETE", &format!("/quotes/{fresh_id}"), None)
        .await;
    assert_eq!(fresh.status, 204, "a quote 2 h old is still valid");
}

#[tokio::test]
async fn beyond_the_limit_the_oldest_unused_quotes_expire_first() {
    let sandbox = sandbox_with(SandboxOptions {
        max_open_quotes: 3,
        ..SandboxOptions::default()
    })
    .await;
    let api = Api::new(&sandbox);
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(api.quote(1, 400.0).await.0);
    }
    for (i, id) in ids.iter().enumerate() {
        let reply = api.send("DELETE", &format!("/quotes/{id}"), None).await;
        if i < 2 {
            assert_eq!(reply.status, 404, "quote {i}: {}", reply.body);
            let message = reply.body["error"]["message"].as_str().unwrap();
            assert!(message.contains("more than 3 unused quotes"), "{message}");
        } else {
            assert_eq!(reply.status, 204, "quote {i}: {}", reply.body);
        }
    }
    // Used quotes do not count against the limit: a subscribed booking keeps working.
    let contract = api.subscribe("PP-EXPIRY-2").await;
    for _ in 0..4 {
        api.quote(1, 400.0).await;
    }
    let claim = api
        .post(
            &format!("/contracts/{contract}/claims"),
            &serde_json::json!({"data": {}}),
        )
        .await;
    assert_eq!(claim.status, 201, "{}", claim.body);
}

//! Quotes answered one entry per bundle (`quote_bundles`), in the provider's documented shape:
//! each entry its own id, reference, price and T&C documents; the quote counted once; a
//! subscription with one bundle's reference recorded as that bundle's.

use ppcert_sandbox::SandboxOptions;
use ppcert_sandbox::testing::*;
use serde_json::Value;

fn bundled() -> SandboxOptions {
    SandboxOptions {
        quote_bundles: vec!["Silver".into(), "Gold".into()],
        ..fast_options()
    }
}

#[tokio::test]
async fn a_quote_is_answered_one_entry_per_bundle_with_its_terms_and_counted_once() {
    let sandbox = sandbox_with(bundled()).await;
    let api = Api::new(&sandbox);
    let reply = api.post("/quotes", &quote_body(1, 400.0, 30)).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let entries: &Vec<Value> = reply.body["data"].as_array().unwrap();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["bundle"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Silver", "Gold"]);
    assert_ne!(entries[0]["reference"], entries[1]["reference"]);
    assert_ne!(entries[0]["id"], entries[1]["id"]);
    assert!(entries[1]["price"]["amount"].as_f64() > entries[0]["price"]["amount"].as_f64());
    let document = &entries[1]["documents"][0];
    assert_eq!(document["bundles"][0], "Gold");
    assert_eq!(document["language"], "en");
    assert_eq!(document["productType"], "WITHDRAWAL");
    assert!(document["url"].as_str().unwrap().contains("gold"));
    assert_eq!(sandbox_counts(&sandbox).get("quote").copied(), Some(1));
}

#[tokio::test]
async fn a_subscription_is_recorded_under_the_bundle_whose_reference_it_used() {
    let sandbox = sandbox_with(bundled()).await;
    let api = Api::new(&sandbox);
    let reply = api.post("/quotes", &quote_body(1, 400.0, 30)).await;
    let gold = reply.body["data"][1]["reference"]
        .as_str()
        .unwrap()
        .to_string();
    let silver_id = reply.body["data"][0]["id"].as_str().unwrap().to_string();
    let subscribed = api
        .post(
            "/subscriptions",
            &subscription_body("AB12345678", &[(&gold, 1)]),
        )
        .await;
    assert_eq!(subscribed.status, 201, "{}", subscribed.body);
    assert_eq!(
        sandbox.subscribed_bundles().into_iter().collect::<Vec<_>>(),
        [("Gold".to_string(), 1)]
    );
    // The bundle not sold stays an open quote that can be deleted by its own id.
    let deleted = api
        .send("DELETE", &format!("/quotes/{silver_id}"), None)
        .await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
}

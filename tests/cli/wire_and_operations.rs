//! Every wire option of the sandbox at once (a vendor media type, JSON Patch updates,
//! multipart claims with a PDF) and subscriptions answered `202 Accepted` with an operation
//! resource: certified with a config written only from the docs (wire-formats.md's file, and
//! flows.md's confirmation of a 202 subscription), its counts equal to the sandbox's, its
//! answers JSON:API documents read where the docs' captures say.

use std::time::Duration;

use ppcert::sandbox::{JSON_API, SandboxOptions, SubscriptionOperations, Wire};

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_wire_options_and_202_subscriptions_are_certified_from_the_docs() {
    let sandbox = sandbox_with(SandboxOptions {
        wire: Wire {
            media_type: Some(JSON_API.into()),
            json_patch_updates: true,
            multipart_claims: true,
        },
        subscription_operations: Some(SubscriptionOperations {
            running_for: Duration::from_millis(300),
            fail_every: None,
        }),
        ..fast_options()
    })
    .await;
    let wire = toml_block(
        include_str!("../../docs/wire-formats.md"),
        "# ppcert.toml: a staging with its own wire formats",
    );
    let flows = include_str!("../../docs/flows.md");
    let operations = toml_block(
        flows,
        "# ppcert.toml: subscriptions confirmed through a 202 operation",
    );
    // The two documented files, one after the other, less the second's `[target]` table
    // (the first names the same environment).
    let confirm = &operations[operations.find("[endpoints.subscription.confirm]").unwrap()..];
    let config = format!("{wire}\n{confirm}");
    let (evidence, _dir) = certified(&sandbox, &config).await;
    assert!(every_requirement_met(&evidence));
    let subscriptions = (evidence["exchanges"].as_array().unwrap().iter())
        .filter(|x| x["operation"] == "subscription" && x["confirm"] != true)
        .count();
    assert!(subscriptions >= 5, "{subscriptions}");
    let confirmed = (evidence["exchanges"].as_array().unwrap().iter())
        .filter(|x| {
            x["confirm"] == true && x["url"].as_str().unwrap_or("").contains("/operations/")
        })
        .count();
    assert!(confirmed >= subscriptions, "{confirmed} confirming reads");
    // The answers were JSON:API documents, read where the docs' captures say.
    let first = |op: &str| {
        (evidence["exchanges"].as_array().unwrap().iter())
            .find(|x| {
                x["operation"] == op && matches!(x["response"]["status"].as_u64(), Some(200 | 201))
            })
            .cloned()
            .unwrap_or_else(|| panic!("no {op} answer"))
    };
    let quote = first("quote");
    assert_eq!(
        quote["response"]["body"]["data"]["type"], "quotes",
        "{quote}"
    );
    let read = |x: &serde_json::Value, name: &str| {
        (x["reads"].as_array().unwrap().iter())
            .find(|r| r["name"] == name)
            .map(|r| r["from"].to_string())
            .unwrap_or_default()
    };
    assert!(
        read(&quote, "reference").contains("$.data.attributes.reference"),
        "{quote}"
    );
    let contracts = first("read_contracts");
    let listed = &contracts["response"]["body"]["data"][0];
    assert_eq!(listed["type"], "contracts", "{contracts}");
    assert!(
        read(&contracts, "contract_id").contains("attributes.productType"),
        "{contracts}"
    );
}

//! Any staging, by configuration: answer layouts the spec leaves open, read with the built-in
//! reading where it can follow them and with `[endpoints.*.capture]` where it cannot; the
//! requirement ledger always equals the server's own count.

use std::collections::BTreeMap;

use ppcert::sandbox::{ErrorShape, Layout, QuoteWrapper, Sandbox, SandboxOptions};
use serde_json::Value;

use crate::common::*;

fn fast(layout: Layout) -> SandboxOptions {
    SandboxOptions {
        layout,
        ..fast_options()
    }
}

/// The evidence's requirement ledger: operation → succeeded.
fn ledger(evidence: &Value) -> BTreeMap<String, u64> {
    evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["operation"].as_str().unwrap().to_string(),
                r["succeeded"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The sandbox's count of the operations the ledger lists.
fn counted_by(sandbox: &Sandbox, ledger: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let counts = sandbox_counts(sandbox);
    ledger
        .keys()
        .map(|op| (op.clone(), counts.get(op).copied().unwrap_or(0)))
        .collect()
}

/// The certification batch against `sandbox`, retrying at once.
fn certify(sandbox: &Sandbox) -> Run {
    Run::against(sandbox)
        .scenario("certification")
        .args(&["--backoff-ms", "1"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_reading_follows_every_layout_it_can_and_counts_equal_the_servers() {
    let variants = [
        Layout {
            quote_wrapper: QuoteWrapper::Quote,
            ..Layout::default()
        },
        Layout {
            nested_contract_objects: true,
            integer_ids: true,
            ..Layout::default()
        },
        Layout {
            empty_created: true,
            errors: ErrorShape::Problem,
            claim_date_day_only: true,
            wrap: false,
            ..Layout::default()
        },
    ];
    for layout in variants {
        let sandbox = sandbox_with(fast(layout)).await;
        let (finished, evidence, _dir) = certify(&sandbox).config("").evidence().await;
        assert_eq!(finished.code, 0, "{layout:?}: {}", finished.stdout);
        let ledger = ledger(&evidence);
        assert_eq!(ledger, counted_by(&sandbox, &ledger), "{layout:?}");
    }
}

/// A staging the built-in reading cannot follow: quote fields two wrappers deep.
fn deep_layout() -> Layout {
    Layout {
        quote_wrapper: QuoteWrapper::ResultQuote,
        nested_contract_objects: true,
        integer_ids: true,
        ..Layout::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_captures_the_run_fails_naming_each_value_but_still_counts_as_the_server() {
    let sandbox = sandbox_with(fast(deep_layout())).await;
    let (finished, evidence, _dir) = certify(&sandbox).config("").evidence().await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    let ledger = ledger(&evidence);
    assert_eq!(ledger, counted_by(&sandbox, &ledger));
    assert!(
        ledger["quote"] >= 5,
        "quotes the server made are counted: {ledger:?}"
    );
    assert!(
        finished
            .stdout
            .contains("could not read `id` from the quote answer"),
        "{}",
        finished.stdout
    );
    assert!(
        finished.stdout.contains("read_reference"),
        "{}",
        finished.stdout
    );
    let reads: Vec<&Value> = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["reads"].as_array().into_iter().flatten())
        .collect();
    assert!(
        reads
            .iter()
            .any(|r| r["name"] == "id" && r["value"].is_null()),
        "the evidence records the value it could not read: {reads:?}"
    );
}

const DEEP_CAPTURES: &str = r#"
[endpoints.quote.capture]
id = "$.data.result.quote.id"
reference = "$.data.result.quote.reference"
price_delta = "$.data.result.quote.priceDelta"

[endpoints.read_contracts.capture]
contract_id = "$.data.{{ product_type }}[0].contract.id"
claim_status = "$.data.{{ product_type }}[0].claim.status"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_captures_the_same_staging_passes_and_records_where_each_value_came_from() {
    let sandbox = sandbox_with(fast(deep_layout())).await;
    let (finished, evidence, _dir) = certify(&sandbox).config(DEEP_CAPTURES).evidence().await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
    let ledger = ledger(&evidence);
    assert_eq!(ledger, counted_by(&sandbox, &ledger));
    let quote_read = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["operation"] == "quote")
        .map(|e| e["reads"][0].clone())
        .unwrap();
    assert_eq!(quote_read["name"], "id");
    assert_eq!(quote_read["from"], "$.data.result.quote.id");
    assert!(quote_read["value"].as_str().unwrap().parse::<u64>().is_ok());
    let claim_dates: Vec<&str> = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["operation"] == "claim")
        .filter_map(|e| e["request"]["body"]["data"]["claimDate"].as_str())
        .collect();
    assert_eq!(claim_dates.len(), 5);
    assert!(
        claim_dates
            .iter()
            .all(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok()),
        "claimDate is sent as a date: {claim_dates:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn problem_details_reach_the_failure_line_in_the_servers_own_words() {
    let sandbox = sandbox_with(fast(Layout {
        errors: ErrorShape::Problem,
        ..Layout::default()
    }))
    .await;
    let config = "[endpoints.subscription]\nbody = '{\"data\": {\"quotes\": []}}'\n";
    let (finished, evidence, _dir) = certify(&sandbox).config(config).evidence().await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    let refused = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["operation"] == "subscription")
        .unwrap();
    assert_eq!(
        refused["response"]["headers"]["content-type"],
        "application/problem+json"
    );
    let field = refused["response"]["body"]["invalid-params"][0]["name"]
        .as_str()
        .unwrap();
    assert!(
        finished.stdout.contains(field),
        "the failure line names the server's field {field}: {}",
        finished.stdout
    );
}

#[tokio::test]
async fn validate_names_file_line_and_key_of_a_bad_capture() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ppcert.toml");
    std::fs::write(
        &config,
        "[target]\nenvironment = \"staging\"\n\n[endpoints.quote.capture]\nid = \"$.id\"\nid-x = \"$.x\"\n",
    )
    .unwrap();
    let finished = ppcert(dir.path(), &["validate", config.to_str().unwrap()], None).await;
    assert_eq!(finished.code, 2, "{} {}", finished.stdout, finished.stderr);
    let said = format!("{}{}", finished.stdout, finished.stderr);
    assert!(said.contains("ppcert.toml:6"), "{said}");
    assert!(said.contains("capture.id-x"), "{said}");
    std::fs::write(
        &config,
        "[endpoints.claim.capture]\nclaim_status = \"$.claim[\"\n",
    )
    .unwrap();
    let finished = ppcert(dir.path(), &["validate", config.to_str().unwrap()], None).await;
    assert_eq!(finished.code, 2);
    let said = format!("{}{}", finished.stdout, finished.stderr);
    assert!(
        said.contains("ppcert.toml:2") && said.contains("not a JSONPath"),
        "{said}"
    );
}

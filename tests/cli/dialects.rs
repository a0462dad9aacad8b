//! Dialects: every shipped scenario in the spec's and the provider docs' request shapes, against
//! a sandbox enforcing the same dialect, with counts equal to the sandbox's; a mismatch is a 400
//! naming the field the sandbox expected.

use ppcert::sandbox::{ApiDialect, SandboxOptions};
use serde_json::Value;

use crate::common::*;

const SCENARIOS: [&str; 5] = [
    "certification",
    "smoke",
    "multi-planning",
    "change-for-any-reason",
    "conformance",
];

fn speaking(dialect: ApiDialect) -> SandboxOptions {
    SandboxOptions {
        dialect,
        ..fast_options()
    }
}

type Counts = Vec<(String, u64)>;

/// The ledger (operation → succeeded) and the sandbox's count of the same operations.
fn ledger_and_sandbox(evidence: &Value, sandbox: &ppcert::sandbox::Sandbox) -> (Counts, Counts) {
    let counts = sandbox_counts(sandbox);
    evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let op = r["operation"].as_str().unwrap().to_string();
            let theirs = counts.get(&op).copied().unwrap_or(0);
            ((op.clone(), r["succeeded"].as_u64().unwrap()), (op, theirs))
        })
        .unzip()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shipped_scenario_passes_in_both_dialects_with_counts_equal_to_the_sandboxs() {
    for (dialect, name) in [
        (ApiDialect::Spec, "spec"),
        (ApiDialect::ProviderDocs, "provider-docs"),
    ] {
        for scenario in SCENARIOS {
            let sandbox = sandbox_with(speaking(dialect)).await;
            let (finished, evidence, _dir) =
                run_against(&sandbox, scenario, &["--dialect", name]).await;
            assert_eq!(finished.code, 0, "{name} {scenario}: {}", finished.stdout);
            let (ledger, theirs) = ledger_and_sandbox(&evidence, &sandbox);
            assert_eq!(ledger, theirs, "{name} {scenario}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_docs_dialect_sends_the_documented_shapes() {
    let sandbox = sandbox_with(speaking(ApiDialect::ProviderDocs)).await;
    let (finished, evidence, _dir) =
        run_against(&sandbox, "certification", &["--dialect", "provider-docs"]).await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
    assert_eq!(evidence["run"]["dialect"], "provider-docs");
    let exchanges = evidence["exchanges"].as_array().unwrap();
    let subscription = exchanges
        .iter()
        .find(|e| e["operation"] == "subscription")
        .unwrap();
    let data = &subscription["request"]["body"]["data"];
    assert!(data.get("client").is_none(), "{data}");
    let language = data["customer"]["language"].as_str().unwrap();
    assert!(
        language.len() >= 2 && data["customer"]["firstName"].is_string(),
        "{data}"
    );
    assert!(
        data["quotes"][0]["travelers"][0]["birthday"].is_string(),
        "{data}"
    );
    let report = exchanges
        .iter()
        .find(|e| e["operation"] == "flight_cancellation")
        .unwrap();
    let url = report["url"].as_str().unwrap();
    let path = url.split("/flights/").nth(1).unwrap();
    let segments: Vec<&str> = path.split('/').collect();
    assert_eq!(segments.len(), 5, "{url}");
    assert_eq!(segments[4], "statuses");
    assert!(
        chrono::NaiveDate::parse_from_str(segments[2], "%Y-%m-%d").is_ok(),
        "{url}"
    );
    assert_eq!(report["request"]["body"]["data"]["status"], "Canceled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_spec_dialect_against_a_provider_docs_staging_fails_naming_customer() {
    let sandbox = sandbox_with(speaking(ApiDialect::ProviderDocs)).await;
    let (finished, evidence, _dir) = run_against(&sandbox, "certification", &[]).await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    assert!(
        finished.stdout.contains("data.customer"),
        "{}",
        finished.stdout
    );
    let (ledger, theirs) = ledger_and_sandbox(&evidence, &sandbox);
    assert_eq!(ledger, theirs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_docs_dialect_against_a_spec_staging_fails_naming_a_spec_field() {
    let sandbox = sandbox_with(speaking(ApiDialect::Spec)).await;
    let (finished, _evidence, _dir) =
        run_against(&sandbox, "certification", &["--dialect", "provider-docs"]).await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    let out = &finished.stdout;
    assert!(
        out.contains("data.client") || out.contains("travelers[0].birthdate"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialect_file_of_the_users_own_and_the_config_key_work_like_the_built_in() {
    let sandbox = sandbox_with(speaking(ApiDialect::ProviderDocs)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("my-staging.toml");
    let text = ppcert::dialect::BUILTIN[1]
        .1
        .replace("name = \"provider-docs\"", "name = \"my-staging\"");
    std::fs::write(&file, text).unwrap();
    let config = dir.path().join("ppcert.toml");
    std::fs::write(
        &config,
        format!("[target]\ndialect = {:?}\n", file.to_str().unwrap()),
    )
    .unwrap();
    let out = dir.path().join("bundle");
    let base = sandbox.base_url();
    let args = run_args(
        &base,
        out.to_str().unwrap(),
        &["--config", config.to_str().unwrap()],
    );
    let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
}

#[tokio::test]
async fn dialects_are_listed_and_the_sandbox_documents_the_one_it_serves() {
    let dir = tempfile::tempdir().unwrap();
    let listed = ppcert(dir.path(), &["dialects"], None).await;
    assert_eq!(listed.code, 0);
    assert!(listed.stdout.contains("spec\n") && listed.stdout.contains("provider-docs\n"));
    let sandbox = sandbox_with(speaking(ApiDialect::ProviderDocs)).await;
    let document: Value = http_client().get(sandbox.openapi_url()).json_answer().await;
    let schemas = &document["components"]["schemas"];
    assert!(schemas["Customer"]["properties"]["language"].is_object());
    assert_eq!(
        schemas["SubscriptionRequest"]["properties"]["customer"]["$ref"],
        "#/components/schemas/Customer"
    );
    assert!(schemas["Traveler"]["properties"]["birthday"].is_object());
    let paths = document["paths"].as_object().unwrap();
    assert!(
        paths
            .keys()
            .any(|p| p.starts_with("/flights/") && p.ends_with("/statuses"))
    );
    assert!(!paths.contains_key("/flight-cancellations"));
}

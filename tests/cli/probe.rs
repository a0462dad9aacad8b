//! `ppcert probe`: against stagings it was not configured for, it finds the dialect and the
//! captures, proves them, and writes a ppcert.toml with which `ppcert run` passes.

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use ppcert::sandbox::{ApiDialect, Layout, QuoteWrapper, Sandbox, SandboxOptions};
use serde_json::Value;

use crate::common::*;

fn deep(dialect: ApiDialect) -> SandboxOptions {
    SandboxOptions {
        dialect,
        layout: Layout {
            quote_wrapper: QuoteWrapper::ResultQuote,
            nested_contract_objects: true,
            integer_ids: true,
            ..Layout::default()
        },
        ..fast_options()
    }
}

/// Probes `sandbox` writing `dir/ppcert.toml`, then runs the certification with that file
/// alone (no --base-url: the written file names the target).
/// The sandbox's counts are taken after the probe, so the run's ledger can be held to the
/// sandbox's count of the run's own calls.
async fn probe_then_run(sandbox: &Sandbox) -> (Finished, Finished, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    let probed = ppcert(
        dir.path(),
        &[
            "probe",
            "--base-url",
            &base,
            "--write-config",
            "ppcert.toml",
        ],
        Some(sandbox.token()),
    )
    .await;
    let written = std::fs::read_to_string(dir.path().join("ppcert.toml")).unwrap_or_default();
    let before = sandbox_counts(sandbox);
    let ran = ppcert(
        dir.path(),
        &["run", "--out", "b", "--backoff-ms", "1"],
        Some(sandbox.token()),
    )
    .await;
    let mut evidence = read_json(&dir.path().join("b/evidence.json"));
    evidence["sandbox_before"] = serde_json::json!(before);
    (probed, ran, evidence, written)
}

fn ledger_equals_sandbox(evidence: &Value, sandbox: &Sandbox) {
    let before = serde_json::from_value(evidence["sandbox_before"].clone()).unwrap();
    ledger_equals_since(evidence, sandbox, &before, false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_finds_captures_for_a_layout_the_built_in_reading_cannot_follow() {
    let sandbox = sandbox_with(deep(ApiDialect::Spec)).await;
    let (probed, ran, evidence, written) = probe_then_run(&sandbox).await;
    assert_eq!(probed.code, 0, "{}{}", probed.stdout, probed.stderr);
    assert!(
        written.contains("id = \"$.data.result.quote.id\""),
        "{written}"
    );
    assert!(written.contains("reference = \"$.data.result.quote.reference\""));
    assert!(
        written.contains("# inferred: found in the quote"),
        "{written}"
    );
    assert!(
        !written.contains("dialect ="),
        "the spec dialect needs no line: {written}"
    );
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    ledger_equals_sandbox(&evidence, &sandbox);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_finds_the_provider_docs_dialect_and_the_captures_together() {
    let sandbox = sandbox_with(deep(ApiDialect::ProviderDocs)).await;
    let (probed, ran, evidence, written) = probe_then_run(&sandbox).await;
    assert_eq!(probed.code, 0, "{}{}", probed.stdout, probed.stderr);
    assert!(written.contains("dialect = \"provider-docs\""), "{written}");
    assert!(
        written.contains("# inferred: subscription was refused in dialect `spec`"),
        "{written}"
    );
    assert!(probed.stdout.contains("data.customer"), "{}", probed.stdout);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    ledger_equals_sandbox(&evidence, &sandbox);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_against_a_plain_provider_docs_staging_needs_only_the_dialect() {
    let sandbox = sandbox_with(SandboxOptions {
        dialect: ApiDialect::ProviderDocs,
        ..fast_options()
    })
    .await;
    let (probed, ran, evidence, written) = probe_then_run(&sandbox).await;
    assert_eq!(probed.code, 0, "{}", probed.stdout);
    assert!(written.contains("dialect = \"provider-docs\""), "{written}");
    assert!(!written.contains(".capture]"), "{written}");
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    ledger_equals_sandbox(&evidence, &sandbox);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_probe_cannot_read_or_prove_is_named_and_it_exits_1() {
    // Quotes are accepted with an empty body: nothing to read, nothing to prove.
    let router = Router::new().route("/quotes", post(|| async { StatusCode::CREATED }));
    let base = serve(router).await;
    let dir = tempfile::tempdir().unwrap();
    let probed = ppcert(
        dir.path(),
        &["probe", "--base-url", &base],
        Some("a-token-for-the-probe"),
    )
    .await;
    assert_eq!(probed.code, 1, "{}{}", probed.stdout, probed.stderr);
    assert!(probed.stdout.contains("left for you:"), "{}", probed.stdout);
    assert!(
        probed.stdout.contains("could not read id"),
        "{}",
        probed.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_is_refused_for_production_and_stops_on_a_rejected_token() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ppcert.toml"),
        "[target]\nbase_url = \"https://127.0.0.1:9\"\nenvironment = \"production\"\n",
    )
    .unwrap();
    let refused = ppcert(dir.path(), &["probe"], Some("a-production-token")).await;
    assert_eq!(refused.code, 5, "{}", refused.stderr);
    let sandbox = sandbox().await;
    let other = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    let rejected = ppcert(
        other.path(),
        &["probe", "--base-url", &base],
        Some("not-the-sandbox-token"),
    )
    .await;
    assert_eq!(rejected.code, 3, "{}", rejected.stderr);
    assert_eq!(sandbox_counts(&sandbox).values().sum::<u64>(), 0);
}

//! Claims count only once confirmed: a run whose claims the staging flagged
//! MANUAL_VERIFICATION_NEEDED, or whose claim statuses never became readable, ends FAILED
//! (exit 1) naming why, and `verify` re-derives the same ledger from the journal.

use std::time::Duration;

use ppcert::models::Operation;
use ppcert::sandbox::{Sandbox, SandboxOptions};
use serde_json::{Value, json};

use crate::common::*;
use crate::proxy::{Partner, start_proxy, stop};

/// The claim requirement of an evidence file.
fn claim_requirement(evidence: &Value) -> &Value {
    evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == "claim")
        .expect("a claim requirement")
}

/// A certification run against a fresh sandbox with `options`, configured by `config`.
pub(crate) async fn certify(
    options: SandboxOptions,
    config: &str,
    extra: &[&str],
) -> (Sandbox, Finished, Value, tempfile::TempDir) {
    let sandbox = sandbox_with(options).await;
    let (finished, evidence, dir) = Run::against(&sandbox)
        .args(&["--backoff-ms", "1"])
        .args(extra)
        .config(config)
        .evidence()
        .await;
    (sandbox, finished, evidence, dir)
}

/// Each of the 5 claims read the contracts for its status, as exchanges of its claim step.
fn assert_claim_steps_read_contracts(evidence: &Value) {
    let reads = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["step"] == "claim" && e["operation"] == "read_contracts")
        .count();
    assert!(reads >= 5, "{reads} confirmation reads");
}

/// A claim body without `claimDate`: the staging flags every such claim (within 24 h).
const NO_CLAIM_DATE: &str = "[endpoints.claim]\nbody = '{\"data\": {}}'\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_claims_the_staging_flagged_fails_naming_the_claim_date_rule() {
    let (sandbox, finished, evidence, dir) = certify(fast_options(), NO_CLAIM_DATE, &[]).await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    assert_eq!(evidence["verdict"], "failed");
    let claims = claim_requirement(&evidence);
    let accepted = sandbox.counts()[&Operation::Claim];
    assert_eq!(accepted, 5, "the staging accepted every claim");
    assert_eq!(claims["succeeded"], 0, "{claims}");
    assert_eq!(claims["failed"], 5, "{claims}");
    assert_eq!(claims["met"], false);
    let output = format!("{}{}", finished.stdout, finished.stderr);
    assert!(
        output.contains("MANUAL_VERIFICATION_NEEDED") && output.contains("claimDate"),
        "the failure names the flag and the rule: {output}"
    );
    let verify = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verify.code, 0, "verify agrees: {}", verify.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_whose_status_never_shows_are_unconfirmed_and_fail_the_run() {
    let config = "[endpoints.claim.capture]\nclaim_status = \"$.nowhere\"\n\n\
                  [endpoints.read_contracts.capture]\nclaim_status = \"$.nowhere\"\n";
    let (sandbox, finished, evidence, dir) = certify(fast_options(), config, &[]).await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    assert_eq!(evidence["verdict"], "failed");
    let claims = claim_requirement(&evidence);
    assert_eq!(
        (&claims["succeeded"], &claims["unconfirmed"], &claims["met"]),
        (&Value::from(0), &Value::from(5), &Value::from(false)),
        "{claims}"
    );
    let output = format!("{}{}", finished.stdout, finished.stderr);
    assert!(output.contains("unconfirmed"), "{output}");
    // Confirmation reads are recorded exchanges of the claim step; nothing else is written.
    assert_claim_steps_read_contracts(&evidence);
    assert_eq!(sandbox.counts()[&Operation::Claim], 5);
    let verify = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verify.code, 0, "verify agrees: {}", verify.stderr);
}

/// `probe` judges its claim as `run` does: a flagged claim is left for the user, not ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_does_not_call_a_flagged_claim_ready() {
    let sandbox = sandbox_with(fast_options()).await;
    let dir = dir_with_config(NO_CLAIM_DATE);
    let probe = ppcert(
        dir.path(),
        &["probe", "--base-url", &sandbox.base_url()],
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(probe.code, 1, "{}\n{}", probe.stdout, probe.stderr);
    let output = format!("{}{}", probe.stdout, probe.stderr);
    assert!(
        output.contains("MANUAL_VERIFICATION_NEEDED") && output.contains("claimDate"),
        "{output}"
    );
}

/// A staging that decides claims after answering them (no status in the claim's answer, the
/// status on the contracts read 1.5 s later) is certified: the claim step reads the contracts
/// until the status shows, and those reads are exchanges of the claim step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_decided_later_are_confirmed_by_reading_the_contracts() {
    let options = SandboxOptions {
        claims_decided_after: Some(Duration::from_millis(1500)),
        ..fast_options()
    };
    let (sandbox, finished, evidence, _dir) = certify(options, "", &[]).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let claims = claim_requirement(&evidence);
    assert_eq!(
        (&claims["succeeded"], &claims["met"]),
        (&Value::from(5), &Value::from(true))
    );
    assert_claim_steps_read_contracts(&evidence);
    ledger_equals(&evidence, &sandbox);
}

/// The partner's claim, through the proxy: quote, subscribe, claim with `claim` as its body.
async fn partner_claims(partner: &Partner, bn: &str, claim: Value) {
    let (_, reference) = partner.quote(quote_body(1, 350.0, 40)).await;
    let body = subscription_body(bn, &[(&reference, 1)]);
    let (status, subscribed) = partner.call("POST", "/subscriptions", Some(body)).await;
    assert_eq!(status, 201, "{subscribed}");
    let contract = subscribed["data"]["contracts"][0]["id"].as_str().unwrap();
    let path = format!("/contracts/{contract}/claims");
    let (status, answer) = partner.call("POST", &path, Some(claim)).await;
    assert_eq!(status, 201, "{answer}");
}

fn claim_day() -> String {
    (chrono::Utc::now() + chrono::Duration::days(2))
        .format("%Y-%m-%d")
        .to_string()
}

/// A claim whose status the partner never read is confirmed by the proxy when the session
/// ends: one GET of the booking's contracts with the partner's token, in the journal, and
/// nothing written at the staging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_confirms_an_unread_claim_with_one_read_at_the_end() {
    let sandbox = sandbox_with(SandboxOptions {
        claims_decided_after: Some(Duration::ZERO),
        ..fast_options()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) = start_proxy(dir.path(), &sandbox.base_url(), &[]).await;
    let partner = Partner::at(url, sandbox.token());
    let claim = json!({"data": {"claimDate": claim_day()}});
    partner_claims(&partner, "PARTNER-LATE", claim).await;
    let (before, requests) = (sandbox.counts(), sandbox.requests_received());
    assert_eq!(stop(&mut proxy).await, 1, "the batch is not complete");
    assert_eq!(sandbox.requests_received(), requests + 1, "one read");
    let mut after = sandbox.counts();
    assert_eq!(after.remove(&Operation::ReadContracts), Some(1));
    assert_eq!(after, before, "nothing written");
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(claim_requirement(&evidence)["succeeded"], 1);
    let journal = std::fs::read_to_string(dir.path().join("b/journal.jsonl")).unwrap();
    assert!(journal.contains("confirming read"), "the read is recorded");
    assert!(!journal.contains(sandbox.token()), "the token is not");
    let verify = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verify.code, 0, "verify agrees: {}", verify.stderr);
}

/// A claim the staging flagged fails the proxy session's claim requirement, in its words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flagged_claim_through_the_proxy_does_not_count() {
    let sandbox = sandbox_with(fast_options()).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) = start_proxy(dir.path(), &sandbox.base_url(), &[]).await;
    let partner = Partner::at(url, sandbox.token());
    partner_claims(&partner, "PARTNER-FLAGGED", json!({"data": {}})).await;
    assert_eq!(stop(&mut proxy).await, 1);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let claims = claim_requirement(&evidence);
    assert_eq!(
        (&claims["succeeded"], &claims["failed"]),
        (&Value::from(0), &Value::from(1))
    );
    let failed = crate::proxy::failed_checks(&evidence).join("\n");
    assert!(
        failed.contains("MANUAL_VERIFICATION_NEEDED") && failed.contains("claimDate"),
        "{failed}"
    );
}

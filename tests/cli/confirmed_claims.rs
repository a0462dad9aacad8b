//! Claims count only once confirmed: a run whose claims the staging flagged
//! MANUAL_VERIFICATION_NEEDED, or whose claim statuses never became readable, ends FAILED
//! (exit 1) naming why, and `verify` re-derives the same ledger from the journal.

use serde_json::Value;

use crate::common::*;
use ppcert::models::Operation;

/// The claim requirement of an evidence file.
fn claim_requirement(evidence: &Value) -> &Value {
    evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == "claim")
        .expect("a claim requirement")
}

/// A claim body without `claimDate`: the staging flags every such claim (within 24 h).
const NO_CLAIM_DATE: &str = "[endpoints.claim]\nbody = '{\"data\": {}}'\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_claims_the_staging_flagged_fails_naming_the_claim_date_rule() {
    let sandbox = sandbox_with(fast_options()).await;
    let (finished, evidence, dir) = Run::against(&sandbox)
        .args(&["--backoff-ms", "1"])
        .config(NO_CLAIM_DATE)
        .evidence()
        .await;
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
    let sandbox = sandbox_with(fast_options()).await;
    let config = "[endpoints.claim.capture]\nclaim_status = \"$.nowhere\"\n\n\
                  [endpoints.read_contracts.capture]\nclaim_status = \"$.nowhere\"\n";
    let (finished, evidence, dir) = Run::against(&sandbox)
        .args(&["--backoff-ms", "1"])
        .config(config)
        .evidence()
        .await;
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
    let reads = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["step"] == "claim" && e["operation"] == "read_contracts")
        .count();
    assert!(reads >= 5, "{reads} confirmation reads");
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

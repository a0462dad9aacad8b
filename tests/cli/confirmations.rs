//! Issue 43: writes are sent once and confirmed by reads. A wait on a write is refused with
//! nothing sent; a staging that decides claims after 12 s, or that confirms subscriptions
//! through a 202 operation, is certified with the docs' config, its counts equal to the
//! staging's; Ctrl-C during a claim's confirmation then `--resume` sends no claim twice.

use std::time::Duration;

use ppcert::models::Operation;
use ppcert::sandbox::{SandboxOptions, SubscriptionOperations};
use serde_json::Value;

use crate::common::*;

const FLOWS: &str = include_str!("../../docs/flows.md");

/// The journal's exchange lines.
fn exchanges(dir: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("b/journal.jsonl")).unwrap();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["type"] == "exchange")
        .collect()
}

/// The write requests of `operation` the journal says were sent (retries of a lost answer
/// included): each is one request the staging received.
fn sent(exchanges: &[Value], operation: &str) -> Vec<Value> {
    (exchanges.iter())
        .filter(|x| x["operation"] == operation && x["method"] != "GET")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_on_a_write_is_refused_by_validate_and_run_with_nothing_sent() {
    let config = "[target]\nenvironment = \"staging\"\n\n[endpoints.claim.wait]\n\
                  until = \"captured.claim_status is defined\"\nevery = \"1s\"\ntimeout = \"20s\"\n";
    let dir = dir_with_config(config);
    let checked = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(checked.code, 2, "{}\n{}", checked.stdout, checked.stderr);
    let said = format!("{}{}", checked.stdout, checked.stderr);
    assert!(said.contains("[endpoints.claim.confirm]"), "{said}");
    assert!(said.contains("ppcert.toml"), "names the file: {said}");
    let sandbox = sandbox_with(fast_options()).await;
    let (finished, _dir) = Run::against(&sandbox).config(config).finish().await;
    assert_eq!(finished.code, 2, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished.stderr.contains("[endpoints.claim.confirm]"),
        "{}",
        finished.stderr
    );
    assert_eq!(sandbox.requests_received(), 0, "nothing is sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staging_deciding_claims_after_12_s_is_certified_with_the_documented_timeout() {
    let sandbox = sandbox_with(SandboxOptions {
        claims_decided_after: Some(Duration::from_secs(12)),
        ..fast_options()
    })
    .await;
    let config = toml_block(FLOWS, "# ppcert.toml: claims decided after 12 s");
    let (_, dir) = certified(&sandbox, &config).await;
    let journal = exchanges(dir.path());
    assert_eq!(sent(&journal, "claim").len(), 5, "each claim sent once");
    let pending = (journal.iter()).filter(|x| x["operation"] == "claim" && x["pending"] == true);
    assert_eq!(
        pending.count(),
        5,
        "each claim journaled as under confirmation"
    );
    let reads = journal.iter().filter(|x| x["confirm"] == true).count();
    assert!(reads >= 5 * 10, "{reads} confirmation reads over 12 s");
}

fn operations(running_for_ms: u64, fail_every: Option<u64>) -> SandboxOptions {
    SandboxOptions {
        subscription_operations: Some(SubscriptionOperations {
            running_for: Duration::from_millis(running_for_ms),
            fail_every,
        }),
        ..fast_options()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_confirmed_through_a_202_operation_are_certified_from_the_docs() {
    let sandbox = sandbox_with(operations(400, None)).await;
    let config = toml_block(
        FLOWS,
        "# ppcert.toml: subscriptions confirmed through a 202 operation",
    );
    let (_, dir) = certified(&sandbox, &config).await;
    let journal = exchanges(dir.path());
    let subscriptions = sent(&journal, "subscription");
    assert_eq!(subscriptions.len(), 8, "each subscription sent once");
    assert!(
        subscriptions
            .iter()
            .all(|x| x["pending"] == true && x["response"]["status"] == 202)
    );
    // Each was settled by a read of its operation that carried the contract id, captured
    // with the confirm table's JSONPath.
    let settled: Vec<&Value> = (journal.iter())
        .filter(|x| x["confirm"] == true && x["poll"].is_null() && x["operation"] == "subscription")
        .collect();
    assert_eq!(settled.len(), 8);
    for read in settled {
        assert!(
            read["url"].as_str().unwrap().contains("/operations/op_"),
            "{read}"
        );
        let kept = read["reads"].as_array().unwrap();
        assert!(
            kept.iter().any(|r| r["name"] == "contract_id"
                && r["from"].as_str().unwrap().starts_with("confirm:")
                && r["value"].as_str().is_some_and(|v| v.starts_with("ct_"))),
            "{read}"
        );
    }
    let polls = journal
        .iter()
        .filter(|x| x["confirm"] == true && x["poll"] == true);
    assert!(polls.count() >= 8, "each operation was read while running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_operation_is_a_failed_subscription_and_an_unread_one_counts_nothing() {
    let sandbox = sandbox_with(operations(100, Some(3))).await;
    let (finished, evidence, _dir) = Run::against(&sandbox)
        .args(&["--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    assert_eq!(evidence["verdict"], "failed");
    ledger_equals(&evidence, &sandbox);
    let subscription = (evidence["requirements"].as_array().unwrap().iter())
        .find(|r| r["operation"] == "subscription")
        .unwrap();
    assert!(
        subscription["failed"].as_u64().unwrap() >= 2,
        "{subscription}"
    );
    assert!(finished.stdout.contains("`failed`") || finished.stderr.contains("`failed`"));
    // With a confirmation too short for the operation, nothing is counted that the staging
    // did not confirm: the subscriptions are unconfirmed, and the staging made none.
    let slow = sandbox_with(operations(5_000, None)).await;
    let config = "[endpoints.subscription.confirm]\nevery = \"100ms\"\ntimeout = \"300ms\"\n";
    let (finished, evidence, _dir) = Run::against(&slow)
        .config(config)
        .args(&["--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    ledger_equals(&evidence, &slow);
    let subscription = (evidence["requirements"].as_array().unwrap().iter())
        .find(|r| r["operation"] == "subscription")
        .unwrap();
    assert_eq!(subscription["succeeded"], 0, "{subscription}");
    assert_eq!(subscription["unconfirmed"], 8, "{subscription}");
    assert_eq!(slow.counts().get(&Operation::Subscription), None);
}

/// Waits until the journal in `dir` shows `n` claims answered and under confirmation.
async fn until_claims_pending(dir: &std::path::Path, n: usize) {
    for _ in 0..3000 {
        let path = dir.join("b/journal.jsonl");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let pending = (text.lines())
            .filter(|l| l.contains("\"operation\":\"claim\"") && l.contains("\"pending\":true"))
            .count();
        if pending >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no claim came under confirmation");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_a_claims_confirmation_then_resume_sends_no_claim_twice() {
    let sandbox = sandbox_with(SandboxOptions {
        claims_decided_after: Some(Duration::from_secs(2)),
        ..fast_options()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let child = Run::against(&sandbox)
        .args(&["--backoff-ms", "1"])
        .spawn(dir.path());
    until_claims_pending(dir.path(), 1).await;
    interrupt(&child).await;
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let claims_before = sent(&exchanges(dir.path()), "claim").len();
    assert!(claims_before >= 1);
    let (finished, evidence) = resume(&sandbox, dir.path()).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert_eq!(evidence["verdict"], "passed");
    ledger_equals(&evidence, &sandbox);
    let claims = sent(&exchanges(dir.path()), "claim");
    assert_eq!(claims.len(), 5, "no claim sent twice: {claims:#?}");
    assert!(
        claims.iter().all(|c| c["response"]["status"] != 409),
        "{claims:#?}"
    );
    assert_eq!(sandbox.counts()[&Operation::Claim], 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_in_a_runs_first_milliseconds_leaves_a_resumable_journal_or_nothing_sent() {
    for delay_ms in [0u64, 3, 10, 30, 80] {
        let sandbox = sandbox_with(fast_options()).await;
        let dir = tempfile::tempdir().unwrap();
        let child = Run::against(&sandbox)
            .args(&["--backoff-ms", "1"])
            .spawn(dir.path());
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        interrupt(&child).await;
        let output = child.wait_with_output().await.unwrap();
        if sandbox.requests_received() == 0 {
            continue; // stopped before anything was sent
        }
        let said = String::from_utf8_lossy(&output.stderr).into_owned();
        if output.status.code() == Some(0) {
            // The whole batch ended before the signal came (a fast machine): nothing to
            // resume, and its own record must equal the staging's.
            let evidence = read_json(&dir.path().join("b/evidence.json"));
            ledger_equals_since(&evidence, &sandbox, &Default::default(), true);
            continue;
        }
        assert_eq!(output.status.code(), Some(130), "{delay_ms} ms: {said}");
        let (finished, evidence) = resume(&sandbox, dir.path()).await;
        assert_eq!(
            finished.code, 0,
            "{delay_ms} ms: {}\n{}",
            finished.stdout, finished.stderr
        );
        ledger_equals_since(&evidence, &sandbox, &Default::default(), true);
    }
}

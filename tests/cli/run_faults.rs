//! Runs that meet 429s, 503s, lost answers, a kill and Ctrl-C, and still count right.

use std::time::Duration;

use ppcert::sandbox::SandboxOptions;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_and_reconciliation_keep_the_ledger_equal_to_the_sandboxes() {
    let options = SandboxOptions {
        rate_limit_every: Some(7),
        retry_after_secs: 0,
        unavailable_every: Some(5),
        drop_every: Some(3),
        ..fast_options()
    };
    let sandbox = sandbox_with(options).await;
    // One flow at a time: the faults, counted per request, then fall on the same calls every run.
    let (finished, evidence, _dir) = run_against(
        &sandbox,
        "certification",
        &["--retries", "8", "--concurrency", "1"],
    )
    .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let exchanges = evidence["exchanges"].as_array().unwrap();
    assert!(
        exchanges.iter().any(|e| e["response"]["status"] == 429),
        "429s were met"
    );
    assert!(
        exchanges.iter().any(|e| e["response"]["status"] == 503),
        "503s were met"
    );
    assert!(
        exchanges.iter().any(|e| e["reconciled"] == true),
        "a lost answer was reconciled"
    );
    assert!(
        exchanges
            .iter()
            .all(|e| e["retried"] == true || e["outcome"] == "passed"),
        "only retried attempts failed"
    );
    let ours = evidence_counts(&evidence);
    let theirs = sandbox_counts(&sandbox);
    for (operation, count) in &theirs {
        let requirement = evidence["requirements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["operation"] == operation.as_str());
        let unconfirmed = requirement.map_or(0, |r| r["unconfirmed"].as_u64().unwrap());
        let trail: Vec<String> = exchanges
            .iter()
            .filter(|e| e["operation"] == operation.as_str())
            .map(|e| {
                format!(
                    "{} {} #{} {} {} {}",
                    e["seq"],
                    e["flow"],
                    e["attempt"],
                    e["outcome"],
                    e["response"]["status"],
                    e["error"]
                )
            })
            .collect();
        let succeeded = ours.get(operation).copied().unwrap_or(0);
        // Any 5xx to a write may or may not have been processed (the sandbox's injected 503s
        // were not): a quote cannot be reconciled, so those are unconfirmed, never guessed.
        assert!(
            succeeded <= *count && *count <= succeeded + unconfirmed,
            "{operation}: ledger {succeeded} (+{unconfirmed} unconfirmed), server {count}: {trail:#?}"
        );
        if operation != "quote" {
            assert_eq!(succeeded, *count, "{operation}: {trail:#?}");
            assert_eq!(
                unconfirmed, 0,
                "{operation}: every lost write but a quote is reconciled"
            );
        }
    }
    assert_eq!(theirs["subscription"], 8, "no duplicate booking");
}

async fn wait_for_lines(path: &std::path::Path, lines: usize) {
    for _ in 0..600 {
        if journal_lines(path).await >= lines {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the journal never reached {lines} lines");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_resumes_to_the_required_counts_without_duplicates() {
    let sandbox = sandbox_with(SandboxOptions {
        latency: Duration::from_millis(25),
        ..SandboxOptions::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_run(&sandbox, dir.path(), "3");
    wait_for_lines(&dir.path().join("b/journal.jsonl"), 40).await;
    child.kill().await.unwrap();
    assert!(
        !dir.path().join("b/evidence.json").exists(),
        "killed before the end"
    );
    let before = sandbox_counts(&sandbox);
    assert!(
        before.get("subscription").copied().unwrap_or(0) < 8,
        "killed midway: {before:?}"
    );

    let base = sandbox.base_url();
    let finished = ppcert(
        dir.path(),
        &["run", "--base-url", &base, "--resume", "b"],
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "passed");
    assert!(every_requirement_met(&evidence));
    let ours = evidence_counts(&evidence);
    let theirs = sandbox_counts(&sandbox);
    for operation in [
        "subscription",
        "update",
        "claim",
        "quote_deletion",
        "flight_cancellation",
    ] {
        assert_eq!(
            ours[operation], theirs[operation],
            "{operation}: counted once on both sides"
        );
    }
    assert_eq!(
        theirs["subscription"], 8,
        "each booking subscribed exactly once"
    );
    assert!(
        theirs["quote"] >= ours["quote"],
        "a quote in flight at the kill may be the provider's alone"
    );
    let seqs: Vec<u64> = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "numbering continues across the resume"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_writes_the_bundle_marked_incomplete_and_exits_130() {
    let sandbox = sandbox_with(SandboxOptions {
        latency: Duration::from_millis(40),
        ..SandboxOptions::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_run(&sandbox, dir.path(), "2");
    wait_for_lines(&dir.path().join("b/journal.jsonl"), 8).await;
    interrupt(&child).await;
    let output = child.wait_with_output().await.unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "incomplete");
    assert_eq!(evidence["run"]["complete"], false);
    let recorded = evidence["exchanges"].as_array().unwrap().len() as u64;
    let processed: u64 = sandbox.counts().values().sum();
    assert_eq!(
        recorded, processed,
        "in-flight requests ended and were recorded"
    );
    let journal = std::fs::read_to_string(dir.path().join("b/journal.jsonl")).unwrap();
    assert!(journal.lines().last().unwrap().contains("\"type\":\"end\""));
}

//! A run killed while a write's retry is in flight, then resumed: every attempt the staging
//! may have processed is on the ledger, however the run died. The staging is a front on the
//! sandbox that does the write and answers 500, then does the retry and never answers, so the
//! run is killed at a known point rather than at a lucky moment.

use std::sync::Arc;
use std::time::Duration;

use ppcert::sandbox::Sandbox;

use crate::common::*;
use crate::hostile::{Action, Rule, front};

/// The staging's count of `op`.
fn staged(sandbox: &Sandbox, op: &str) -> u64 {
    sandbox_counts(sandbox).get(op).copied().unwrap_or(0)
}

/// The journal's `sending` lines: each attempt of a write, written before it is sent.
fn sending_lines(dir: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("b/journal.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["type"] == "sending")
        .collect()
}

/// The second quote POST is done and answered 500; its retry is done too and left unanswered;
/// SIGKILL then. The staging holds both quotes of that call: the resumed run's evidence must
/// account for both (succeeded plus unconfirmed covers the staging's count), and every other
/// write is counted exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_a_quotes_retry_after_a_500_is_in_flight_the_ledger_holds_both_attempts() {
    let sandbox = sandbox_with(fast_options()).await;
    let rule: Rule = Arc::new(|method, path, count| match (method.as_str(), path, count) {
        ("POST", "/quotes", 1) => Action::ForwardThen(500),
        ("POST", "/quotes", 2) => Action::ForwardThenHang,
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Run::at(&base, sandbox.token())
        .args(&["--concurrency", "1", "--backoff-ms", "1"])
        .spawn(dir.path());
    // The first quote, the one answered 500, and its retry: all three made by the staging.
    for _ in 0..2000 {
        if staged(&sandbox, "quote") >= 3 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its retry hung"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        staged(&sandbox, "quote"),
        3,
        "the retry never reached the staging"
    );
    child.kill().await.unwrap();
    // Each attempt was journaled before it was sent: the hanging retry is on the record.
    let attempts: Vec<u64> = sending_lines(dir.path())
        .iter()
        .filter(|l| l["operation"] == "quote")
        .map(|l| l["attempt"].as_u64().unwrap_or(1))
        .collect();

    let finished = resume_run_at(&base, &sandbox, dir.path()).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "passed");
    // Quotes within succeeded + unconfirmed (nothing makes a quote unique), every other write
    // exactly: none taken twice behind the ledger's back.
    ledger_equals_since(&evidence, &sandbox, &Default::default(), true);
    let quote = evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == "quote")
        .unwrap();
    assert_eq!(quote["unconfirmed"], 2, "the 500 and the hanging retry");
    assert_eq!(
        attempts,
        [1, 1, 2],
        "quote attempts journaled before sending"
    );
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

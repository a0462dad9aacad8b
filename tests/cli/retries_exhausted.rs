//! A write whose answer was lost, then whose retries all ran out on answers that say nothing
//! of it: the ledger settles it by reading rather than leaving it unconfirmed. The staging is
//! a front on the sandbox that does the first subscription and answers 500, then refuses its
//! retries with 429 without passing them on, so the order is fixed rather than left to load.

use std::sync::Arc;

use crate::common::*;
use crate::hostile::{Action, Rule, front};

/// The first subscription is made and answered 500; both its retries meet 429. The staging
/// holds it: the evidence counts it once, as succeeded (reconciled by reading the booking's
/// contracts), and every other write as the staging counted it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_whose_retries_run_out_after_a_lost_answer_is_settled_by_reading() {
    let sandbox = sandbox_with(fast_options()).await;
    let rule: Rule = Arc::new(|method, path, count| match (method.as_str(), path, count) {
        ("POST", "/subscriptions", 0) => Action::ForwardThen(500),
        ("POST", "/subscriptions", 1 | 2) => Action::Answer(
            429,
            vec![("retry-after", "0".to_string())],
            r#"{"error": {"code": "RATE_LIMITED", "message": "too many requests"}}"#.into(),
        ),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let (finished, evidence) = Run::at(&base, sandbox.token())
        .args(&["--concurrency", "1", "--backoff-ms", "1", "--retries", "2"])
        .evidence_in(tempfile::tempdir().unwrap().path())
        .await;
    let subscription = evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == "subscription")
        .unwrap()
        .clone();
    let staged = sandbox_counts(&sandbox)["subscription"];
    assert_eq!(
        subscription["succeeded"], staged,
        "the staging's count: {subscription}\n{}",
        finished.stdout
    );
    assert_eq!(subscription["unconfirmed"], 0, "{subscription}");
    ledger_equals(&evidence, &sandbox);
    let reconciled: Vec<&serde_json::Value> = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["reconciled"] == true)
        .collect();
    assert_eq!(reconciled.len(), 1, "the exhausted subscription");
    assert_eq!(reconciled[0]["response"]["status"], 429);
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
}

//! A write whose answer was lost, then whose retries all ran out on answers that say nothing
//! of it: the ledger settles it by reading rather than leaving it unconfirmed. The staging is
//! a front on the sandbox that does the first subscription and answers 500, then refuses its
//! retries with 429 without passing them on, so the order is fixed rather than left to load.

use std::sync::Arc;

use crate::common::*;
use crate::hostile::{Action, Rule, front};

/// The first subscription (then, in a second run, the first claim) is made and answered 500;
/// both its retries meet 429. The staging holds it: the evidence counts it once, as succeeded
/// (reconciled by reading the booking's contracts), and every other write as the staging
/// counted it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_retries_run_out_after_a_lost_answer_is_settled_by_reading() {
    for op in ["subscription", "claim"] {
        let sandbox = sandbox_with(fast_options()).await;
        let rule: Rule = Arc::new(move |method, path, count| {
            let path = if path.ends_with("/claims") {
                "claim"
            } else {
                path.trim_start_matches('/')
            };
            let ours = method == "POST" && path.trim_end_matches('s') == op;
            match count {
                0 if ours => Action::ForwardThen(500),
                1 | 2 if ours => Action::Answer(
                    429,
                    vec![("retry-after", "0".to_string())],
                    r#"{"error": {"code": "RATE_LIMITED", "message": "too many requests"}}"#.into(),
                ),
                _ => Action::Forward,
            }
        });
        let base = front(&sandbox, rule).await;
        let (finished, evidence) = Run::at(&base, sandbox.token())
            .args(&["--concurrency", "1", "--backoff-ms", "1", "--retries", "2"])
            .evidence_in(tempfile::tempdir().unwrap().path())
            .await;
        let requirement = evidence["requirements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["operation"] == op)
            .unwrap()
            .clone();
        let staged = sandbox_counts(&sandbox)[op];
        assert_eq!(
            requirement["succeeded"], staged,
            "{op}: the staging's count: {requirement}\n{}",
            finished.stdout
        );
        assert_eq!(requirement["unconfirmed"], 0, "{op}: {requirement}");
        ledger_equals(&evidence, &sandbox);
        let reconciled: Vec<&serde_json::Value> = evidence["exchanges"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["reconciled"] == true)
            .collect();
        assert_eq!(reconciled.len(), 1, "{op}: the exhausted write");
        assert_eq!(reconciled[0]["operation"], op);
        assert_eq!(reconciled[0]["response"]["status"], 429);
        assert_eq!(
            finished.code, 0,
            "{op}: {}\n{}",
            finished.stdout, finished.stderr
        );
    }
}

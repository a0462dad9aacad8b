//! A resumed run whose first call loses its answer stops (exit 4, the target did not answer);
//! the next `--resume` redoes that write with the same idempotency key and the staging replays
//! it. The lost attempt and the redo are one call: the evidence counts the subscription once,
//! nothing unconfirmed and no failure, as the staging holds it once. The staging is a front on the sandbox
//! that processes the first two subscriptions and never answers them, so the order is fixed.

use std::sync::Arc;
use std::time::Duration;

use ppcert::sandbox::SandboxOptions;

use crate::common::*;
use crate::hostile::{Action, Rule, front};

const KEYED: &str = "[endpoints.subscription.headers]\nIdempotency-Key = \"{{ idempotency_key }}\"\n\
                     [endpoints.claim.headers]\nIdempotency-Key = \"{{ idempotency_key }}\"\n";

/// `ppcert run --resume b` through `base`, with the keyed config and a 1 s request timeout.
async fn resume_through(base: &str, token: &str, dir: &std::path::Path) -> Finished {
    let extra = ["--config", "ppcert.toml", "--timeout", "1"];
    resume_run_with(base, token, dir, &extra).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_write_whose_answer_was_lost_is_settled_by_its_redo() {
    let sandbox = sandbox_with(SandboxOptions {
        require_idempotency_key: true,
        ..fast_options()
    })
    .await;
    // The first subscription is made and never answered (the run is killed then); so is its
    // redo, the resumed run's first call, which the staging replays by its key.
    let rule: Rule = Arc::new(|method, path, count| match (method.as_str(), path, count) {
        ("POST", "/subscriptions", 0 | 1) => Action::ForwardThenHang,
        // The redo's answer with the staging's headers: its replay mark reaches ppcert.
        ("POST", "/subscriptions", 2) => Action::ForwardWithHeaders,
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Run::at(&base, sandbox.token())
        .config(KEYED)
        .args(&["--concurrency", "1", "--backoff-ms", "1"])
        .spawn(dir.path());
    for _ in 0..2000 {
        if sandbox_counts(&sandbox).get("subscription").copied() == Some(1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        sandbox_counts(&sandbox)["subscription"],
        1,
        "never subscribed"
    );
    child.kill().await.unwrap();

    let stopped = resume_through(&base, sandbox.token(), dir.path()).await;
    assert_eq!(stopped.code, 4, "{}\n{}", stopped.stdout, stopped.stderr);
    assert_eq!(
        sandbox_counts(&sandbox)["subscription"],
        1,
        "replayed by key"
    );

    let finished = resume_through(&base, sandbox.token(), dir.path()).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let subscription = (evidence["requirements"].as_array().unwrap().iter())
        .find(|r| r["operation"] == "subscription")
        .unwrap();
    assert_eq!(
        subscription["succeeded"],
        sandbox_counts(&sandbox)["subscription"]
    );
    let subscriptions: Vec<String> = (evidence["exchanges"].as_array().unwrap().iter())
        .filter(|e| e["operation"] == "subscription")
        .map(|e| {
            format!(
                "{} {} #{} {} {} {} {}",
                e["flow"],
                e["step"],
                e["attempt"],
                e["response"]["status"],
                e["error"],
                e["outcome"],
                e["checks"]
            )
        })
        .collect();
    // Nothing unconfirmed, and the lost attempt the resumed run went on from is no failure.
    assert_eq!(
        (&subscription["unconfirmed"], &subscription["failed"]),
        (&serde_json::json!(0), &serde_json::json!(0)),
        "{subscription}\n{}",
        subscriptions.join("\n")
    );
    ledger_equals(&evidence, &sandbox);
    // The redo numbers on from the lost attempt: one call on the record, and the staging's
    // replay mark is what the evidence says proves it.
    let redo = (evidence["exchanges"].as_array().unwrap().iter())
        .find(|e| e["operation"] == "subscription" && e["attempt"] == 2)
        .expect("the redo is attempt 2");
    let said = redo["checks"].to_string();
    assert!(said.contains("marked its HTTP 201 a replay"), "{said}");
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}\n{}", verified.stdout, verified.stderr);
}

//! A write answered `202 Accepted` that names nowhere to read (no `Location`, no
//! `Content-Location`) and has no `[endpoints.WRITE.confirm] read`: pending until confirmed.
//! A subscription is confirmed by reading its booking's contracts until they are listed; any
//! other such write stays unconfirmed, never counted on the 202's word. The staging is a front
//! on the sandbox that answers the writes 202 with no header but its content type.

use std::sync::Arc;
use std::time::Duration;

use ppcert::sandbox::SandboxOptions;
use serde_json::Value;

use crate::common::*;
use crate::hostile::{Action, Rule, front};

fn requirement(evidence: &Value, op: &str) -> Value {
    (evidence["requirements"].as_array().unwrap().iter())
        .find(|r| r["operation"] == op)
        .unwrap()
        .clone()
}

/// Subscriptions answered 202 by a staging that lists a booking's contracts only 300 ms
/// later; the first one is answered 202 without reaching the staging at all. Every one made
/// is confirmed by reading (after reads that found nothing yet) and counted; the one never
/// made stays unconfirmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_accepted_with_nowhere_to_read_is_confirmed_by_its_contracts() {
    let sandbox = sandbox_with(SandboxOptions {
        contracts_delay: Some(Duration::from_millis(300)),
        ..fast_options()
    })
    .await;
    let rule: Rule = Arc::new(|method, path, count| match (method.as_str(), path) {
        ("POST", "/subscriptions") if count == 0 => {
            Action::Answer(202, vec![], r#"{"status": "accepted"}"#.into())
        }
        ("POST", "/subscriptions") => Action::ForwardAs(202),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let config = "[endpoints.subscription.confirm]\nevery = \"100ms\"\ntimeout = \"2s\"\n";
    let (finished, evidence, _dir) = Run::at(&base, sandbox.token())
        .config(config)
        .args(&["--concurrency", "1", "--backoff-ms", "1"])
        .evidence()
        .await;
    let subscription = requirement(&evidence, "subscription");
    let staged = sandbox_counts(&sandbox)["subscription"];
    assert!(staged >= 5, "{staged}");
    assert_eq!(subscription["succeeded"], staged, "{subscription}");
    assert_eq!(
        subscription["unconfirmed"], 1,
        "the one never made: {subscription}"
    );
    ledger_equals(&evidence, &sandbox);
    let exchanges = evidence["exchanges"].as_array().unwrap();
    let confirming = |e: &&Value| e["confirm"] == true && e["operation"] == "read_contracts";
    let reads: Vec<&Value> = exchanges.iter().filter(confirming).collect();
    assert!(
        reads
            .iter()
            .any(|e| e["checks"].to_string().contains("not listed yet")),
        "a read before the contracts were listed: {}",
        finished.stdout
    );
    let never = (exchanges.iter())
        .find(|e| e["checks"].to_string().contains("did not show in 2 s"))
        .expect("the subscription never made is unconfirmed");
    assert_eq!(never["operation"], "read_contracts", "{never}");
}

/// Updates and flight reports answered 202 with nowhere to read: nothing confirms them, so
/// none counts (the staging made them all: unconfirmed, not succeeded), the run is not met
/// (exit 1) and the failed check names the 202 and the setting to add.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_other_write_accepted_with_nowhere_to_read_is_unconfirmed() {
    for (op, method, prefix) in [
        ("update", "PATCH", "/subscriptions/"),
        ("flight_cancellation", "POST", "/flight-cancellations"),
    ] {
        let sandbox = sandbox_with(fast_options()).await;
        let (finished, evidence) = run_answered_202(&sandbox, method, prefix).await;
        let counted = requirement(&evidence, op);
        let staged = sandbox_counts(&sandbox)[op];
        assert!(staged > 0, "{op}");
        assert_eq!(counted["succeeded"], 0, "{op}: {counted}");
        assert_eq!(counted["unconfirmed"], staged, "{op}: {counted}");
        assert_eq!(counted["met"], false, "{op}");
        assert_eq!(finished.code, 1, "{op}: {}", finished.stdout);
        let said = evidence["exchanges"].to_string();
        assert!(
            said.contains("answered HTTP 202 Accepted, naming no Location")
                && said.contains(&format!("`[endpoints.{op}.confirm] read`")),
            "{op}: {}",
            finished.stdout
        );
    }
}

/// A quote deletion answered 202 with nowhere to read: 202 is one of the answers the
/// provider's docs give a deletion, and no read shows a quote that is gone, so it counts as
/// the deletion, with a check saying so and naming the read that would confirm it instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_accepted_with_nowhere_to_read_counts_as_the_docs_answer() {
    let sandbox = sandbox_with(fast_options()).await;
    let (finished, evidence) = run_answered_202(&sandbox, "DELETE", "/quotes/").await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
    let counted = requirement(&evidence, "quote_deletion");
    assert_eq!(
        counted["succeeded"],
        sandbox_counts(&sandbox)["quote_deletion"]
    );
    assert_eq!(counted["unconfirmed"], 0, "{counted}");
    let said = evidence["exchanges"].to_string();
    assert!(
        said.contains("deletion_accepted")
            && said.contains("`[endpoints.quote_deletion.confirm] read`"),
        "{}",
        finished.stdout
    );
}

/// The default batch against `sandbox` behind a front that answers 202, with no `Location`,
/// to every `method` request under `prefix` (after the sandbox did the write).
async fn run_answered_202(
    sandbox: &ppcert::sandbox::Sandbox,
    method: &'static str,
    prefix: &'static str,
) -> (Finished, Value) {
    let rule: Rule = Arc::new(move |m, path, _| {
        if m.as_str() == method && path.starts_with(prefix) {
            Action::ForwardAs(202)
        } else {
            Action::Forward
        }
    });
    let base = front(sandbox, rule).await;
    let (finished, evidence, _dir) = Run::at(&base, sandbox.token())
        .args(&["--concurrency", "1", "--backoff-ms", "1"])
        .evidence()
        .await;
    (finished, evidence)
}

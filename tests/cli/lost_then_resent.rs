//! An update, a quote deletion or a flight-cancellation report whose answer was lost, then
//! whose retries all met 503: nothing reads it back, so it is sent again as it was until an
//! answer settles it, and the ledger counts it as the staging does. The staging is a front on
//! the sandbox that fixes the order (the first write processed or not, then more 503s than
//! `--retries` allows), so nothing depends on timing.

use std::sync::Arc;

use crate::common::*;
use crate::hostile::{Action, Rule, front};

/// The writes with no read that shows them, and how each is sent.
const WRITES: [(&str, &str, &str); 3] = [
    ("update", "PATCH", "/subscriptions"),
    ("quote_deletion", "DELETE", "/quotes"),
    ("flight_cancellation", "POST", "/flight-cancellations"),
];

/// 503s after the first attempt: more than one call's `--retries 2` allows, so the write is
/// sent again twice after its retries ran out.
const UNAVAILABLE: u64 = 5;

/// A front whose first `op` write is processed (or not) and answered 500, whose next
/// `UNAVAILABLE` are answered 503 without reaching the sandbox, and the rest passed on.
fn lost_then_unavailable(method: &'static str, prefix: &'static str, processed: bool) -> Rule {
    Arc::new(move |m, path, count| {
        let ours = m.as_str() == method && path.starts_with(prefix) && path != "/quotes";
        match count {
            0 if ours && processed => Action::ForwardThen(500),
            0 if ours => Action::Answer(500, vec![], r#"{"error": "boom"}"#.into()),
            n if ours && n <= UNAVAILABLE => Action::Answer(
                503,
                vec![("retry-after", "0".to_string())],
                r#"{"error": {"code": "UNAVAILABLE", "message": "try again"}}"#.into(),
            ),
            _ => Action::Forward,
        }
    })
}

/// Whether the lost write was processed or not, the staging holds each write once and the
/// evidence counts it once, with nothing unconfirmed; `verify` derives the same ledger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_without_a_read_is_sent_again_until_answered_and_counted_once() {
    for (op, method, prefix) in WRITES {
        for processed in [true, false] {
            let case = format!("{op}, lost attempt processed: {processed}");
            let sandbox = sandbox_with(fast_options()).await;
            let base = front(&sandbox, lost_then_unavailable(method, prefix, processed)).await;
            let dir = tempfile::tempdir().unwrap();
            let (finished, evidence) = Run::at(&base, sandbox.token())
                .args(&["--concurrency", "1", "--backoff-ms", "1", "--retries", "2"])
                .out("b")
                .evidence_in(dir.path())
                .await;
            let requirement = (evidence["requirements"].as_array().unwrap().iter())
                .find(|r| r["operation"] == op)
                .unwrap()
                .clone();
            let staged = sandbox_counts(&sandbox)[op];
            assert_eq!(requirement["succeeded"], staged, "{case}: {requirement}");
            assert_eq!(requirement["unconfirmed"], 0, "{case}: {requirement}");
            assert_eq!(requirement["failed"], 0, "{case}: {requirement}");
            ledger_equals(&evidence, &sandbox);
            // The write's final answer: attempt 7 (1 lost, 2 and 3 its retries, 4 to 6 the
            // first send again, 7 the second), one call on the record.
            let last = (evidence["exchanges"].as_array().unwrap().iter())
                .rfind(|e| e["operation"] == op && e["attempt"].as_u64() > Some(1))
                .unwrap_or_else(|| panic!("{case}: no retried {op}"));
            assert_eq!(last["attempt"], 7, "{case}: {last}");
            let status = last["response"]["status"].as_u64().unwrap();
            if processed {
                assert!([404, 409, 412].contains(&status), "{case}: {last}");
                assert_eq!(last["reconciled"], true, "{case}: {last}");
            } else {
                assert!((200..300).contains(&status), "{case}: {last}");
            }
            assert_eq!(
                finished.code, 0,
                "{case}: {}\n{}",
                finished.stdout, finished.stderr
            );
            let verified = ppcert(dir.path(), &["verify", "b"], None).await;
            assert_eq!(
                verified.code, 0,
                "{case}: {}\n{}",
                verified.stdout, verified.stderr
            );
        }
    }
}

/// The same on a staging whose updates need `If-Match` (docs/flows.md's config): the lost
/// update took effect, so the update sent again carries a stale `If-Match` and meets 412,
/// which is that attempt's trace: counted once, as the staging holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_sent_again_under_a_stale_if_match_is_reconciled_by_its_412() {
    let flows = include_str!("../../docs/flows.md");
    let sandbox = crate::living_staging::living_sandbox().await;
    // Every other answer with its headers: the contracts read's `ETag` is what `If-Match` sends.
    let lost = lost_then_unavailable("PATCH", "/subscriptions", true);
    let rule: Rule = Arc::new(move |method, path, count| match lost(method, path, count) {
        Action::Forward => Action::ForwardWithHeaders,
        action => action,
    });
    let base = front(&sandbox, rule).await;
    let dir = crate::living_staging::dir_with_docs_scenario(flows);
    let (finished, evidence) = Run::at(&base, sandbox.token())
        .config(&crate::living_staging::living_config(flows))
        .scenario("scenarios/conditional.toml")
        .args(&["--concurrency", "1", "--backoff-ms", "1", "--retries", "2"])
        .evidence_in(dir.path())
        .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let update = (evidence["requirements"].as_array().unwrap().iter())
        .find(|r| r["operation"] == "update")
        .unwrap();
    assert_eq!(update["succeeded"], sandbox_counts(&sandbox)["update"]);
    assert_eq!(update["unconfirmed"], 0, "{update}");
    ledger_equals(&evidence, &sandbox);
    let last = (evidence["exchanges"].as_array().unwrap().iter())
        .rfind(|e| e["operation"] == "update" && e["attempt"].as_u64() > Some(1))
        .expect("the update sent again");
    assert_eq!(last["response"]["status"], 412, "{last}");
    assert_eq!(last["reconciled"], true, "{last}");
}

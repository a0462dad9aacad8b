//! A partner client that recovers from a lost answer the way the provider tells partners to
//! (retry, then read its contracts on a 409; or retry with the same idempotency key) is graded
//! as the staging counted it: the write once, no failed check. The answer is lost by the
//! sandbox itself (`drop_every`: it writes, then drops the connection).

use serde_json::Value;

use crate::common::*;
use crate::proxy::{Partner, failed_checks, start_proxy, stop};

/// The partner's quote, then its subscription of `bn` (the second POST: its answer is lost).
async fn quote_then_subscribe(partner: &Partner, bn: &str, key: Option<&str>) -> (u16, Value) {
    let (_, reference) = partner.quote(quote_body(1, 350.0, 40)).await;
    subscribe(partner, bn, &reference, key).await
}

async fn subscribe(
    partner: &Partner,
    bn: &str,
    reference: &str,
    key: Option<&str>,
) -> (u16, Value) {
    let mut request = partner
        .http
        .post(format!("{}/subscriptions", partner.base))
        .bearer_auth(&partner.token)
        .json(&subscription_body(bn, &[(reference, 1)]));
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().await.unwrap_or(Value::Null))
}

fn requirement<'a>(evidence: &'a Value, operation: &str) -> &'a Value {
    evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == operation)
        .unwrap()
}

/// The subscription's counts (succeeded, failed, unconfirmed) and the checks failed.
fn graded(evidence: &Value) -> ((u64, u64, u64), Vec<String>) {
    let r = requirement(evidence, "subscription");
    let n = |k: &str| r[k].as_u64().unwrap_or(0);
    (
        (n("succeeded"), n("failed"), n("unconfirmed")),
        failed_checks(evidence),
    )
}

async fn session(
    options: ppcert::sandbox::SandboxOptions,
    partner_does: impl AsyncFnOnce(&Partner, &str),
) -> (Value, ppcert::sandbox::Sandbox, tempfile::TempDir) {
    let sandbox = sandbox_with(options).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) = start_proxy(dir.path(), &sandbox.base_url(), &[]).await;
    let partner = Partner::at(url, sandbox.token());
    partner_does(&partner, sandbox.token()).await;
    let code = stop(&mut proxy).await;
    assert!(code == 1 || code == 3, "a short session: {code}");
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    (evidence, sandbox, dir)
}

fn losing_second_post() -> ppcert::sandbox::SandboxOptions {
    ppcert::sandbox::SandboxOptions {
        drop_every: Some(2),
        ..fast_options()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_met_by_409_then_a_read_is_a_recovery_counted_once() {
    let (evidence, sandbox, _dir) = session(losing_second_post(), async |partner, _| {
        let (_, reference) = partner.quote(quote_body(1, 350.0, 40)).await;
        let (status, _) = subscribe(partner, "LOST-1", &reference, None).await;
        assert_eq!(status, 502, "the partner sees no answer from the API");
        // What the provider tells partners: retry; a 409 means it may exist: read it.
        let (status, _) = subscribe(partner, "LOST-1", &reference, None).await;
        assert_eq!(status, 409, "the staging took the first");
        let (status, contracts) = partner
            .call("GET", "/subscriptions/LOST-1/contracts", None)
            .await;
        assert_eq!(status, 200, "{contracts}");
    })
    .await;
    assert_eq!(sandbox_counts(&sandbox)["subscription"], 1);
    let (counts, failed) = graded(&evidence);
    assert_eq!(counts, (1, 0, 0), "counted once, as at the staging");
    assert!(failed.is_empty(), "a recovery is no failure: {failed:?}");
    let reconciled: Vec<&Value> = (evidence["exchanges"].as_array().unwrap().iter())
        .filter(|x| x["reconciled"] == true)
        .collect();
    assert_eq!(reconciled.len(), 1, "the 409 settles the call");
    assert_eq!(reconciled[0]["response"]["status"], 409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_with_the_same_idempotency_key_is_counted_once() {
    let options = ppcert::sandbox::SandboxOptions {
        require_idempotency_key: true,
        ..losing_second_post()
    };
    let (evidence, sandbox, _dir) = session(options, async |partner, _| {
        let (_, reference) = partner.quote(quote_body(1, 350.0, 40)).await;
        let (status, _) = subscribe(partner, "KEYED-1", &reference, Some("k-1")).await;
        assert_eq!(status, 502);
        let (status, answer) = subscribe(partner, "KEYED-1", &reference, Some("k-1")).await;
        assert_eq!(status, 201, "replayed: {answer}");
    })
    .await;
    assert_eq!(sandbox_counts(&sandbox)["subscription"], 1);
    let (counts, failed) = graded(&evidence);
    assert_eq!(counts, (1, 0, 0));
    assert!(failed.is_empty(), "{failed:?}");
}

/// A client that gives up after the lost answer: the staging holds the subscription all the
/// same, and the proxy's own read at the end counts it as the staging did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_answer_the_partner_never_settles_is_counted_as_the_staging_holds_it() {
    let (evidence, sandbox, _dir) = session(losing_second_post(), async |partner, _| {
        let (status, _) = quote_then_subscribe(partner, "GAVE-UP-1", None).await;
        assert_eq!(status, 502);
    })
    .await;
    assert_eq!(sandbox_counts(&sandbox)["subscription"], 1);
    let (counts, _) = graded(&evidence);
    assert_eq!(counts, (1, 0, 0), "the staging holds it once");
    let read = (evidence["exchanges"].as_array().unwrap().iter())
        .find(|x| x["operation"] == "read_contracts")
        .expect("the proxy read the booking's contracts itself");
    assert!(read["url"].as_str().unwrap().contains("GAVE-UP-1"));
}

/// Without the lost answer, the same 409 is the partner's mistake, and fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_409_with_no_lost_answer_before_it_still_fails() {
    let (evidence, _sandbox, _dir) = session(fast_options(), async |partner, _| {
        let (status, _) = quote_then_subscribe(partner, "TWICE-1", None).await;
        assert_eq!(status, 201);
        let (_, reference) = partner.quote(quote_body(1, 350.0, 40)).await;
        let (status, _) = subscribe(partner, "TWICE-1", &reference, None).await;
        assert_eq!(status, 409);
    })
    .await;
    let (counts, failed) = graded(&evidence);
    assert_eq!(counts, (1, 1, 0));
    assert!(!failed.is_empty());
}

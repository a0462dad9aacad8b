//! `ppcert proxy --faults standard`: two partner clients written here (not ppcert's engine),
//! one that never retries and one that handles errors as the provider asks, certified through
//! the proxy in front of the sandbox. The first fails, each fault named with what it did; the
//! second passes; in both the ledger equals the sandbox's own counts, and the verdicts are
//! signed and graded again by `verify`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;
use crate::proxy::{Partner, start_proxy, stop};

/// What one call came to: an answer, or none (the connection dropped before it).
enum Answer {
    Got(u16, Value),
    Lost,
}

/// One call; with `patient`, 429 and 503 are retried after their `Retry-After` (else 300 ms).
async fn call(
    partner: &Partner,
    method: &str,
    path: &str,
    body: Option<&Value>,
    key: Option<&str>,
    patient: bool,
) -> Answer {
    for _ in 0..10 {
        let mut request = partner
            .http
            .request(method.parse().unwrap(), format!("{}{path}", partner.base))
            .bearer_auth(&partner.token);
        if let Some(body) = body {
            request = request.json(body);
        }
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        let Ok(response) = request.send().await else {
            return Answer::Lost;
        };
        let status = response.status().as_u16();
        let wait = (response.headers().get("retry-after"))
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
            .map_or(Duration::from_millis(300), Duration::from_secs);
        let Ok(text) = response.text().await else {
            return Answer::Lost;
        };
        if patient && matches!(status, 429 | 503) {
            tokio::time::sleep(wait).await;
            continue;
        }
        return Answer::Got(status, serde_json::from_str(&text).unwrap_or(Value::Null));
    }
    panic!("{method} {path}: still refused after 10 tries");
}

/// The first contract id an answer shows, wherever its layout puts it.
fn contract_id(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) => map
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| id.starts_with("ct_"))
            .map(str::to_string)
            .or_else(|| map.values().find_map(contract_id)),
        Value::Array(items) => items.iter().find_map(contract_id),
        _ => None,
    }
}

/// A 2xx answer's JSON, or `None`.
fn ok(answer: Answer) -> Option<Value> {
    match answer {
        Answer::Got(status, value) if (200..300).contains(&status) => Some(value),
        _ => None,
    }
}

/// The careful client's subscription: with an Idempotency-Key; after a lost answer or a
/// 409, it reads the booking's contracts, and sends again only if they are not there.
async fn careful_subscription(partner: &Partner, bn: &str, body: &Value) -> String {
    let key = format!("subscribe-{bn}");
    for _ in 0..3 {
        match call(
            partner,
            "POST",
            "/subscriptions",
            Some(body),
            Some(&key),
            true,
        )
        .await
        {
            Answer::Got(201, answer) => return contract_id(&answer).unwrap(),
            Answer::Got(409, _) | Answer::Lost => {
                let path = format!("/subscriptions/{bn}/contracts");
                if let Some(read) = ok(call(partner, "GET", &path, None, None, true).await)
                    && let Some(id) = contract_id(&read)
                {
                    return id;
                }
            }
            Answer::Got(status, answer) => panic!("subscription {bn}: {status} {answer}"),
        }
    }
    panic!("subscription {bn}: never settled");
}

/// One booking through its life; `careful` or not. Returns whether it got to its end.
async fn booking(partner: &Partner, bn: &str, report_cancellation: bool, careful: bool) -> bool {
    let quote = quote_body(1, 350.0, 40);
    let flight = quote["data"]["trips"][0]["journeys"][0]["flights"][0].clone();
    let Some(quoted) = ok(call(partner, "POST", "/quotes", Some(&quote), None, careful).await)
    else {
        return false;
    };
    let reference = quoted["data"]["reference"].as_str().unwrap().to_string();
    let subscription = subscription_body(bn, &[(&reference, 1)]);
    let contract = if careful {
        careful_subscription(partner, bn, &subscription).await
    } else {
        let answer = call(
            partner,
            "POST",
            "/subscriptions",
            Some(&subscription),
            None,
            false,
        )
        .await;
        let Some(subscribed) = ok(answer) else {
            return false;
        };
        contract_id(&subscribed).unwrap()
    };
    let mut update_quote = quote;
    update_quote["data"]["trips"][0]["price"]["amount"] = json!(420.0);
    update_quote["data"]["bookingNumber"] = json!(bn);
    let Some(update) = ok(call(
        partner,
        "POST",
        "/quotes",
        Some(&update_quote),
        None,
        careful,
    )
    .await) else {
        return false;
    };
    let update = update_body(update["data"]["id"].as_str().unwrap(), 1);
    let path = format!("/subscriptions/{bn}");
    if ok(call(partner, "PATCH", &path, Some(&update), None, careful).await).is_none() {
        return false;
    }
    let Some(spare) = ok(call(
        partner,
        "POST",
        "/quotes",
        Some(&quote_body(1, 99.0, 50)),
        None,
        careful,
    )
    .await) else {
        return false;
    };
    let path = format!("/quotes/{}", spare["data"]["id"].as_str().unwrap());
    if ok(call(partner, "DELETE", &path, None, None, careful).await).is_none() {
        return false;
    }
    let claim_day = (chrono::Utc::now() + chrono::Duration::days(2))
        .format("%Y-%m-%d")
        .to_string();
    let claim = json!({"data": {"claimDate": claim_day}});
    let path = format!("/contracts/{contract}/claims");
    let key = format!("claim-{bn}");
    if ok(call(partner, "POST", &path, Some(&claim), Some(&key), careful).await).is_none() {
        return false;
    }
    if report_cancellation {
        let report = json!({"data": {"bookingNumber": bn, "airlineIata": flight["airlineIata"], "number": flight["number"], "departureDate": flight["departureDate"]}});
        let answer = call(
            partner,
            "POST",
            "/flight-cancellations",
            Some(&report),
            None,
            careful,
        )
        .await;
        return ok(answer).is_some();
    }
    true
}

/// The resilience rows of a bundle: (operation, kind, verdict, what the client did).
fn rows(evidence: &Value) -> Vec<(String, String, String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    evidence["resilience"]["faults"]
        .as_array()
        .expect("a resilience section")
        .iter()
        .map(|f| {
            (
                text(&f["operation"]),
                text(&f["kind"]),
                text(&f["verdict"]),
                text(&f["client_did"]),
            )
        })
        .collect()
}

/// No booking number was subscribed twice at the staging, and the ledger is its count.
fn ledger_is_the_stagings(evidence: &Value, sandbox: &ppcert::sandbox::Sandbox) {
    ledger_equals(evidence, sandbox);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_retries_fails_the_standard_plan_fault_by_fault() {
    let sandbox = sandbox_with(fast_options()).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) =
        start_proxy(dir.path(), &sandbox.base_url(), &["--faults", "standard"]).await;
    let partner = Partner::at(url, sandbox.token());
    for i in 0..6 {
        booking(&partner, &format!("NAIVE-{i}"), i < 4, false).await;
    }
    assert_eq!(stop(&mut proxy).await, 1);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "failed");
    let rows = rows(&evidence);
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert!(rows.iter().all(|r| r.2 == "mishandled"), "{rows:?}");
    let said = |op: &str, kind: &str, words: &str| {
        assert!(
            rows.iter()
                .any(|r| r.0 == op && r.1 == kind && r.3.contains(words)),
            "{op} {kind}: {words}: {rows:?}"
        )
    };
    said("quote", "status", "before the Retry-After");
    said(
        "subscription",
        "status",
        "never sent the subscription again",
    );
    said(
        "subscription",
        "lost_answer",
        "did nothing after the lost answer",
    );
    said("claim", "status", "never sent the claim again");
    let resilience = &evidence["resilience"];
    assert_eq!(
        (resilience["handled"].as_u64(), resilience["met"].as_bool()),
        (Some(0), Some(false))
    );
    ledger_is_the_stagings(&evidence, &sandbox);
    assert_eq!(
        resilience_row(&evidence),
        json!({"operation": "resilience", "required": 4, "succeeded": 0, "failed": 4,
            "unconfirmed": 0, "met": false})
    );
    let report = std::fs::read_to_string(dir.path().join("b/report.md")).unwrap();
    assert!(
        report.contains("did nothing after the lost answer"),
        "the report's resilience section"
    );
    assert!(
        report.contains("| `resilience` | 4 | 0 | 4 | 0 | ❌ no |"),
        "the ledger's row: {report}"
    );
    let html = std::fs::read_to_string(dir.path().join("b/report.html")).unwrap();
    assert!(html.contains("<td><code>resilience</code></td>"), "{html}");
    let junit = std::fs::read_to_string(dir.path().join("b/junit.xml")).unwrap();
    assert_eq!(
        junit.matches("classname=\"resilience\"").count(),
        4,
        "a testcase per fault"
    );
    assert!(
        junit.contains("name=\"requirement › resilience\""),
        "the ledger's testcase: {junit}"
    );
    edited_verdict_fails_verify(dir.path()).await;
    edited_row_fails_verify(dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_handles_errors_passes_the_standard_plan() {
    let sandbox = sandbox_with(fast_options()).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) = start_proxy(
        dir.path(),
        &sandbox.base_url(),
        &["--faults", "standard", "--until-met"],
    )
    .await;
    let partner = Partner::at(url, sandbox.token());
    for i in 0..5 {
        assert!(booking(&partner, &format!("CAREFUL-{i}"), i < 3, true).await);
    }
    let code = tokio::time::timeout(Duration::from_secs(30), proxy.wait())
        .await
        .expect("--until-met stops the proxy")
        .unwrap()
        .code();
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let rows = rows(&evidence);
    assert!(rows.iter().all(|r| r.2 == "handled"), "{rows:?}");
    assert_eq!(rows.len(), 4);
    assert_eq!(code, Some(0), "{}", evidence["warnings"]);
    assert_eq!(evidence["verdict"], "passed");
    ledger_is_the_stagings(&evidence, &sandbox);
    assert_eq!(evidence["resilience"]["met"], true);
    assert_eq!(
        resilience_row(&evidence),
        json!({"operation": "resilience", "required": 4, "succeeded": 4, "failed": 0,
            "unconfirmed": 0, "met": true})
    );
    assert_eq!(
        ppcert(dir.path(), &["keygen", "--out", "k"], None)
            .await
            .code,
        0
    );
    let signed = ppcert(dir.path(), &["sign", "b", "--key", "k"], None).await;
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    let verified = ppcert(dir.path(), &["verify", "b", "--key", "k.pub"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

/// The ledger's last row, the plan's.
fn resilience_row(evidence: &Value) -> Value {
    let rows = evidence["requirements"].as_array().expect("a ledger");
    let operations = &rows[..rows.len() - 1];
    assert!(
        operations.iter().all(|r| r["operation"] != "resilience"),
        "{rows:?}"
    );
    rows.last().unwrap().clone()
}

/// The ledger's resilience row edited to met (the verdict with it, the manifest rewritten)
/// fails `verify`: the journal grades the plan again.
async fn edited_row_fails_verify(dir: &Path) {
    copy_dir(&dir.join("b"), &dir.join("r"));
    let path = dir.join("r/evidence.json");
    let mut evidence = read_json(&path);
    let last = evidence["requirements"].as_array().unwrap().len() - 1;
    evidence["requirements"][last]["met"] = json!(true);
    evidence["requirements"][last]["succeeded"] = json!(4);
    evidence["verdict"] = json!("passed");
    std::fs::write(&path, serde_json::to_vec_pretty(&evidence).unwrap()).unwrap();
    rehash(&dir.join("r"), "evidence.json");
    let verified = ppcert(dir, &["verify", "r"], None).await;
    assert_eq!(verified.code, 1, "{}", verified.stdout);
    assert!(
        verified.stderr.contains(&format!(
            "requirements[{last}].met: evidence.json says true"
        )),
        "{}",
        verified.stderr
    );
}

/// A verdict edited in evidence.json (its manifest line rewritten, as a forger would) fails
/// `verify`: the journal grades the fault again.
async fn edited_verdict_fails_verify(dir: &Path) {
    copy_dir(&dir.join("b"), &dir.join("e"));
    let path = dir.join("e/evidence.json");
    let mut evidence = read_json(&path);
    evidence["resilience"]["faults"][2]["verdict"] = json!("handled");
    std::fs::write(&path, serde_json::to_vec_pretty(&evidence).unwrap()).unwrap();
    rehash(&dir.join("e"), "evidence.json");
    let verified = ppcert(dir, &["verify", "e"], None).await;
    assert_eq!(verified.code, 1, "{}", verified.stdout);
    assert!(
        verified.stderr.contains("resilience.faults[2].verdict"),
        "{}",
        verified.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_plan_is_refused_against_production_and_its_mistakes_are_named() {
    let dir = dir_with_config("");
    std::fs::write(
        dir.path().join("f.toml"),
        "[[faults]]\noperation = \"quote\"\nkind = \"status\"\nstatus = 500\nnth = 1\n",
    )
    .unwrap();
    let args = ["proxy", "--listen", "127.0.0.1:0", "--faults", "f.toml"];
    let bad = ppcert(dir.path(), &args, None).await;
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr
            .contains("f.toml:4: status: 500 is not 429 or 503"),
        "{}",
        bad.stderr
    );
    let production = [
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--base-url",
        "https://api.example.com",
        "--environment",
        "production",
        "--faults",
        "standard",
    ];
    let refused = ppcert(dir.path(), &production, Some("t0k3n-for-production")).await;
    assert_eq!(refused.code, 5, "{}", refused.stderr);
    assert!(refused.stderr.contains("--faults"), "{}", refused.stderr);
}

/// A held answer (`delay`) longer than the client's timeout: the client that then reads the
/// booking's contracts back handled it, and the subscription counts once, as at the staging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_answer_read_back_after_the_client_timed_out_is_handled() {
    let sandbox = sandbox_with(fast_options()).await;
    let dir = tempfile::tempdir().unwrap();
    let plan =
        "[[faults]]\noperation = \"subscription\"\nkind = \"delay\"\nfor = \"1500ms\"\nnth = 1\n";
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let (mut proxy, url) =
        start_proxy(dir.path(), &sandbox.base_url(), &["--faults", "plan.toml"]).await;
    let partner = Partner::at(url, sandbox.token());
    let (_, reference) = partner.quote(quote_body(1, 350.0, 40)).await;
    let timed_out = partner
        .http
        .post(format!("{}/subscriptions", partner.base))
        .bearer_auth(&partner.token)
        .timeout(Duration::from_millis(300))
        .json(&subscription_body("HELD-1", &[(&reference, 1)]))
        .send()
        .await;
    assert!(
        timed_out.is_err(),
        "the client gave up before the held answer"
    );
    let (status, _) = partner
        .call("GET", "/subscriptions/HELD-1/contracts", None)
        .await;
    assert_eq!(status, 200);
    stop(&mut proxy).await;
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let rows = rows(&evidence);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].1.as_str(), rows[0].2.as_str()),
        ("delay", "handled"),
        "{rows:?}"
    );
    assert!(
        rows[0].3.contains("read the booking's contracts back"),
        "{rows:?}"
    );
    ledger_is_the_stagings(&evidence, &sandbox);
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

/// A partner's webhook receiver: keeps what each delivery carried (its `webhook-id` and body);
/// with `refuse_duplicates`, answers a delivery id it already processed with 500.
pub(crate) async fn receiver(
    refuse_duplicates: bool,
) -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>,
) {
    use axum::http::{HeaderMap, StatusCode};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, String)>::new()));
    let kept = seen.clone();
    let handler = move |headers: HeaderMap, body: String| {
        let kept = kept.clone();
        async move {
            let id = (headers.get("webhook-id"))
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            let mut seen = kept.lock().unwrap();
            let again = seen.iter().any(|(seen_id, _)| *seen_id == id);
            seen.push((id, body));
            if again && refuse_duplicates {
                StatusCode::INTERNAL_SERVER_ERROR
            } else {
                StatusCode::NO_CONTENT
            }
        }
    };
    let base = serve(axum::Router::new().route("/hooks", axum::routing::post(handler))).await;
    (format!("{base}/hooks"), seen)
}

/// The staging's delivery of `contract.created` through a proxy with one `duplicate_webhook`
/// fault, to a receiver that does (or does not) acknowledge the duplicate: the rows, the
/// staging's answer, the deliveries the receiver saw, and the bundle's directory.
async fn duplicated(
    refuse_duplicates: bool,
) -> (
    Vec<(String, String, String, String)>,
    u16,
    Vec<(String, String)>,
    tempfile::TempDir,
) {
    let sandbox = sandbox_with(fast_options()).await;
    let (hooks, seen) = receiver(refuse_duplicates).await;
    let dir = tempfile::tempdir().unwrap();
    let plan = "[[faults]]\noperation = \"subscription\"\nkind = \"duplicate_webhook\"\nnth = 1\n";
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let extra = ["--faults", "plan.toml", "--webhook-forward", hooks.as_str()];
    let (mut proxy, url) = start_proxy(dir.path(), &sandbox.base_url(), &extra).await;
    let delivery = json!({"event": "contract.created", "data": {"contract": {"id": "ct_1",
        "subscription": {"bookingNumber": "HOOK-1"}}}});
    let staging = http_client()
        .post(format!("{url}/_ppcert/webhooks"))
        .header("webhook-id", "msg_1")
        .header("webhook-signature", "v1,c2lnbmVk")
        .json(&delivery)
        .send()
        .await
        .unwrap();
    let status = staging.status().as_u16();
    stop(&mut proxy).await;
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let seen = seen.lock().unwrap().clone();
    (rows(&evidence), status, seen, dir)
}

/// A duplicate delivery (same body, same signature headers) the receiver acknowledges is
/// handled, and the verdict survives `verify`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_acknowledges_a_duplicate_webhook_handles_it() {
    let (rows, status, seen, dir) = duplicated(false).await;
    assert_eq!(status, 204, "the staging gets the receiver's first answer");
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0], seen[1], "the duplicate is the same delivery");
    assert_eq!(seen[0].0, "msg_1");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str(), rows[0].2.as_str()),
        ("subscription", "duplicate_webhook", "handled"),
        "{rows:?}"
    );
    assert!(rows[0].3.contains("204 then 204"), "{rows:?}");
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

/// A receiver that answers the duplicate with a 5xx mishandles it: the staging would deliver
/// again what it already processed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_fails_a_duplicate_webhook_mishandles_it() {
    let (rows, status, seen, _dir) = duplicated(true).await;
    assert_eq!(status, 204);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        (rows[0].1.as_str(), rows[0].2.as_str()),
        ("duplicate_webhook", "mishandled"),
        "{rows:?}"
    );
    assert!(rows[0].3.contains("its duplicate 500"), "{rows:?}");
}

/// A plan naming duplicate_webhook without `--webhook-forward` is refused before the proxy
/// listens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_webhook_fault_needs_webhook_forward() {
    let dir = dir_with_config("");
    let plan = "[[faults]]\noperation = \"subscription\"\nkind = \"duplicate_webhook\"\nnth = 1\n";
    std::fs::write(dir.path().join("f.toml"), plan).unwrap();
    let args = ["proxy", "--listen", "127.0.0.1:0", "--faults", "f.toml"];
    let refused = ppcert(dir.path(), &args, None).await;
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("--webhook-forward"),
        "{}",
        refused.stderr
    );
}

//! `ppcert proxy` in front of a server, driven by a small partner client written here (not
//! ppcert's engine): a clean certification through it meets every requirement with the
//! sandbox's own counts (what it holds a partner to is `proxy_checks`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::common::*;

/// Starts the proxy in front of `base`; returns it and the URL the partner uses. Its output
/// is drained, so a session of many exchanges (a line each on stderr) never blocks on it.
pub(crate) async fn start_proxy(
    dir: &std::path::Path,
    base: &str,
    extra: &[&str],
) -> (tokio::process::Child, String) {
    let mut child = ppcert_command(dir, &proxy_args(base, extra), None)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = stdout.next_line().await.unwrap().unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    (child, url)
}

/// `proxy` on a free loopback port in front of `base`, its bundle in `b/`, then `extra`.
pub(crate) fn proxy_args<'a>(base: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--base-url",
        base,
        "--out",
        "b",
    ];
    args.extend_from_slice(extra);
    args
}

pub(crate) async fn stop(child: &mut tokio::process::Child) -> i32 {
    interrupt(child).await;
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    status.code().unwrap_or(-1)
}

/// The partner's own little client: bearer token, JSON in and out.
pub(crate) struct Partner {
    pub(crate) base: String,
    pub(crate) token: String,
    pub(crate) http: reqwest::Client,
}

impl Partner {
    /// The partner's client pointed at `base` (the proxy), with `token`.
    pub(crate) fn at(base: String, token: &str) -> Partner {
        Partner {
            base,
            token: token.to_string(),
            http: http_client(),
        }
    }

    pub(crate) async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self
            .http
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub(crate) async fn quote(&self, body: Value) -> (String, String) {
        let (status, answer) = self.call("POST", "/quotes", Some(body)).await;
        assert_eq!(status, 201, "{answer}");
        let data = &answer["data"];
        (
            data["id"].as_str().unwrap().into(),
            data["reference"].as_str().unwrap().into(),
        )
    }

    /// One booking through its life, as the certification batch asks.
    pub(crate) async fn booking(&self, bn: &str, report_cancellation: bool) {
        let quote = quote_body(1, 350.0, 40);
        let flight = quote["data"]["trips"][0]["journeys"][0]["flights"][0].clone();
        let (_, reference) = self.quote(quote.clone()).await;
        let (status, subscribed) = self
            .call(
                "POST",
                "/subscriptions",
                Some(subscription_body(bn, &[(&reference, 1)])),
            )
            .await;
        assert_eq!(status, 201, "{subscribed}");
        let contract = subscribed["data"]["contracts"][0]["id"]
            .as_str()
            .unwrap()
            .to_string();
        // The same flight, re-priced: a flight built anew could fall a second later, and the
        // cancellation reported below would then name a flight the booking no longer has.
        let mut update_quote = quote;
        update_quote["data"]["trips"][0]["price"]["amount"] = json!(420.0);
        update_quote["data"]["bookingNumber"] = json!(bn);
        let (update_id, _) = self.quote(update_quote).await;
        let (status, _) = self
            .call(
                "PATCH",
                &format!("/subscriptions/{bn}"),
                Some(update_body(&update_id, 1)),
            )
            .await;
        assert_eq!(status, 201);
        let (spare, _) = self.quote(quote_body(1, 99.0, 50)).await;
        assert_eq!(
            self.call("DELETE", &format!("/quotes/{spare}"), None)
                .await
                .0,
            204
        );
        let claim_day = (chrono::Utc::now() + chrono::Duration::days(2))
            .format("%Y-%m-%d")
            .to_string();
        let (status, claim) = self
            .call(
                "POST",
                &format!("/contracts/{contract}/claims"),
                Some(json!({"data": {"claimDate": claim_day}})),
            )
            .await;
        assert_eq!(status, 201, "{claim}");
        if report_cancellation {
            let report = json!({"data": {"bookingNumber": bn, "airlineIata": flight["airlineIata"], "number": flight["number"], "departureDate": flight["departureDate"]}});
            let (status, answer) = self
                .call("POST", "/flight-cancellations", Some(report))
                .await;
            assert_eq!(status, 201, "{answer}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partner_certified_through_the_proxy_gets_the_sandboxs_own_counts() {
    let sandbox = sandbox_with(ppcert::sandbox::SandboxOptions { ..fast_options() }).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) = start_proxy(dir.path(), &sandbox.base_url(), &["--until-met"]).await;
    let partner = Partner::at(url, sandbox.token());
    for i in 0..5 {
        partner.booking(&format!("PARTNER-{i}"), i < 3).await;
    }
    let code = tokio::time::timeout(Duration::from_secs(20), proxy.wait())
        .await
        .expect("--until-met stops the proxy")
        .unwrap()
        .code();
    assert_eq!(code, Some(0));
    let bundle = dir.path().join("b");
    let evidence = read_json(&bundle.join("evidence.json"));
    assert_eq!(evidence["verdict"], "passed", "{}", evidence["warnings"]);
    assert_eq!(
        evidence["run"]["scenario_source"],
        "partner traffic through ppcert proxy"
    );
    let mut expected = sandbox_counts(&sandbox);
    expected.remove("read_contracts");
    assert_eq!(evidence_counts(&evidence), expected);
    let exchange = &evidence["exchanges"][1];
    assert_eq!(
        exchange["booking_number"], "PARTNER-0",
        "attributed: {exchange}"
    );
    let journal = std::fs::read_to_string(bundle.join("journal.jsonl")).unwrap();
    assert!(
        !journal.contains(sandbox.token()),
        "the partner's token is never recorded"
    );
    assert!(journal.contains("fingerprint"), "only its fingerprint");
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    // A proxy session is nothing `run --resume` can continue, and it says so plainly.
    let resumed = ppcert(dir.path(), &["run", "--resume", "b"], Some(sandbox.token())).await;
    assert_eq!(resumed.code, 2);
    assert!(
        resumed
            .stderr
            .contains("partner traffic recorded by ppcert proxy"),
        "{}",
        resumed.stderr
    );
}

/// A partner whose staging documents its own flight-cancellation report (configured in
/// `[endpoints.flight_cancellation]`, a shape our sandbox would refuse) and who prices in
/// Kenyan shillings: the staging accepts all of it, so the proxy must pass it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partner_whose_traffic_the_staging_accepted_in_full_passes() {
    let sandbox = sandbox_with(ppcert::sandbox::SandboxOptions { ..fast_options() }).await;
    let rule: crate::hostile::Rule = Arc::new(|method, path, _| match (method.as_str(), path) {
        ("POST", "/flight-reports") => crate::hostile::Action::Answer(
            201,
            vec![],
            r#"{"data": {"status": "RECEIVED"}}"#.to_string(),
        ),
        _ => crate::hostile::Action::Forward,
    });
    let staging = crate::hostile::front(&sandbox, rule).await;
    let dir = dir_with_config(concat!(
        "[endpoints.flight_cancellation]\n",
        "method = \"POST\"\n",
        "path = \"/flight-reports\"\n",
        "body = '{\"data\": {\"flight\": {{ flight.number | tojson }}, \"status\": \"CANCELLED\"}}'\n",
    ));
    let (mut proxy, url) = start_proxy(dir.path(), &staging, &["--until-met"]).await;
    let partner = Partner::at(url, sandbox.token());
    let mut quote = quote_body(1, 35000.0, 40);
    quote["data"]["currency"] = json!("KES");
    quote["data"]["trips"][0]["price"]["currency"] = json!("KES");
    let (status, answer) = partner.call("POST", "/quotes", Some(quote)).await;
    assert_eq!(status, 201, "KES is an ISO 4217 code: {answer}");
    for i in 0..5 {
        partner.booking(&format!("DOCS-{i}"), false).await;
    }
    for _ in 0..3 {
        let report = json!({"data": {"flight": "1234", "status": "CANCELLED"}});
        let (status, _) = partner.call("POST", "/flight-reports", Some(report)).await;
        assert_eq!(status, 201);
    }
    let code = tokio::time::timeout(Duration::from_secs(20), proxy.wait())
        .await
        .expect("--until-met stops the proxy")
        .unwrap()
        .code();
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(
        evidence["verdict"],
        "passed",
        "{:?}",
        failed_checks(&evidence)
    );
    assert_eq!(code, Some(0));
}

pub(crate) fn failed_checks(evidence: &Value) -> Vec<String> {
    evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["checks"].as_array().unwrap().iter())
        .filter(|c| c["passed"] == false && c["warning"] != true)
        .map(|c| {
            format!(
                "{}: {}",
                c["name"].as_str().unwrap(),
                c["detail"].as_str().unwrap()
            )
        })
        .collect()
}

/// A proxy that cannot listen (the address is taken) is a usage error that leaves nothing
/// behind: no bundle directory, no journal. `--addr` is the same flag as `--listen`, as on
/// `serve` and `webhook listen`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_that_cannot_listen_leaves_no_bundle_behind() {
    let sandbox = sandbox().await;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    let args = [
        "proxy",
        "--addr",
        &address,
        "--base-url",
        &base,
        "--out",
        "b",
    ];
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("cannot listen"),
        "{}",
        finished.stderr
    );
    assert!(
        !dir.path().join("b").exists(),
        "a bundle directory was left"
    );
    assert_eq!(sandbox.requests_received(), 0);
}

//! A `ppcert proxy` session of thousands of exchanges, whose record stays in the journal until
//! the bundle is written from it: evidence.json still holds every exchange, step and warning,
//! the reports say what they leave out, and `ppcert verify` computes the same verdict again.

use axum::http::{HeaderMap, StatusCode};
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::proxy::{start_proxy, stop};
use crate::common::*;

const SUBSCRIPTIONS: usize = 1100;
const QUOTES: usize = 300;
const REFUSED: usize = 600;
const EXCHANGES: usize = SUBSCRIPTIONS + QUOTES + REFUSED;
const REPORTS: [&str; 3] = ["report.html", "report.md", "junit.xml"];

/// A staging that answers subscriptions 200 (the spec states 201: a warning each) and quotes
/// 201, except those the partner marks to be refused (400).
async fn staging() -> String {
    let router = axum::Router::new()
        .route(
            "/subscriptions",
            axum::routing::post(|| async {
                let contract = json!({"id": "ct_1", "productType": "WITHDRAWAL"});
                (
                    StatusCode::OK,
                    axum::Json(json!({"data": {"contracts": [contract]}})),
                )
            }),
        )
        .route(
            "/quotes",
            axum::routing::post(|headers: HeaderMap| async move {
                if headers.contains_key("x-refuse") {
                    let error =
                        json!({"error": {"code": "INVALID", "message": "refused on purpose"}});
                    return (StatusCode::BAD_REQUEST, axum::Json(error));
                }
                let quote = json!({"data": {"id": "q_1", "reference": "R_1"}});
                (StatusCode::CREATED, axum::Json(quote))
            }),
        );
    serve(router).await
}

/// The `n`th request of the session, and the status it must get.
fn request(http: &reqwest::Client, url: &str, n: usize) -> (reqwest::RequestBuilder, u16) {
    let token = "partner_token_0123456789";
    if n < SUBSCRIPTIONS {
        let body = subscription_body(&format!("MANY-{n}"), &[("R_1", 1)]);
        let post = http.post(format!("{url}/subscriptions")).json(&body);
        return (post.bearer_auth(token), 200);
    }
    let post =
        (http.post(format!("{url}/quotes")).bearer_auth(token)).json(&quote_body(1, 200.0, 30));
    if n < SUBSCRIPTIONS + REFUSED {
        (post.header("x-refuse", "1"), 400)
    } else {
        (post, 201)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_of_thousands_of_exchanges_gets_a_complete_bundle_that_verifies() {
    let upstream = staging().await;
    let dir = tempfile::tempdir().unwrap();
    // Named, so the only warnings are the deviations this test counts.
    let (mut proxy, url) =
        start_proxy(dir.path(), &upstream, &["--partner-name", "Many Trips"]).await;
    let http = http_client();
    let answered: Vec<bool> = futures_util::stream::iter(0..EXCHANGES)
        .map(|n| {
            let (request, expected) = request(&http, &url, n);
            async move { request.send().await.unwrap().status().as_u16() == expected }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    assert!(
        answered.iter().all(|ok| *ok),
        "answered as the staging does"
    );
    assert_eq!(stop(&mut proxy).await, 1, "the refused quotes fail it");

    let bundle = dir.path().join("b");
    complete(&read_json(&bundle.join("evidence.json")));
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}{}", verified.stdout, verified.stderr);
    // The reports come out the same rendered again from evidence.json, read whole.
    let read = |name: &str| std::fs::read_to_string(bundle.join(name)).unwrap();
    let written: Vec<String> = REPORTS.iter().map(|name| read(name)).collect();
    let rendered = ppcert(dir.path(), &["report", "b"], None).await;
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    for (name, before) in REPORTS.iter().zip(&written) {
        assert!(read(name) == *before, "{name} rendered again differs");
    }
    reports_say_what_they_leave_out(&read("report.md"), &read("report.html"));
    junit_lists_the_failures_and_counts_the_rest(&read("junit.xml"));
}

/// Every exchange (whole, in order), step, flow and warning, counted as the provider would.
fn complete(evidence: &Value) {
    let exchanges = evidence["exchanges"].as_array().unwrap();
    let seqs: Vec<u64> = (exchanges.iter())
        .map(|x| x["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=EXCHANGES as u64).collect::<Vec<_>>());
    assert!(
        (exchanges.iter()).all(|x| x["request"]["body"]["data"].is_object()),
        "each exchange whole, its body included"
    );
    assert_eq!(evidence["steps"].as_array().unwrap().len(), EXCHANGES);
    let flows = evidence["flows"].as_array().unwrap();
    assert_eq!(flows.len(), SUBSCRIPTIONS + 1, "a flow per booking");
    let deviations = (evidence["warnings"].as_array().unwrap().iter())
        .filter(|w| w.as_str().unwrap().contains("where the spec states 201"));
    assert_eq!(deviations.count(), SUBSCRIPTIONS, "past those memory kept");
    let counts = evidence_counts(evidence);
    assert_eq!(counts["quote"], QUOTES as u64, "{counts:?}");
    assert_eq!(counts["subscription"], SUBSCRIPTIONS as u64, "{counts:?}");
    let quote = (evidence["requirements"].as_array().unwrap().iter())
        .find(|r| r["operation"] == "quote")
        .unwrap();
    assert_eq!(quote["failed"], REFUSED);
}

fn reports_say_what_they_leave_out(markdown: &str, html: &str) {
    assert!(markdown.contains(&format!("### Failures ({REFUSED})")));
    let flows = SUBSCRIPTIONS + 1;
    assert!(markdown.contains(&format!("{EXCHANGES} exchanges in {flows} flows")));
    assert!(html.contains(&format!("Failures ({REFUSED})")));
    let more_failures = format!("{} more failures in evidence.json.", REFUSED - 500);
    assert!(html.contains(&more_failures));
    let more_warnings = format!("{} more warnings in evidence.json.", SUBSCRIPTIONS - 500);
    assert!(html.contains(&more_warnings));
}

/// Every step that did not pass, each quoting an answer, and the first 500 that passed; the
/// rest counted in the suites' `ppcert.steps_not_listed`.
fn junit_lists_the_failures_and_counts_the_rest(junit: &str) {
    let xml = roxmltree::Document::parse(junit).unwrap();
    let steps: Vec<_> = (xml.descendants())
        .filter(|n| n.has_tag_name("testsuite") && n.attribute("name") != Some("requirements"))
        .flat_map(|s| s.children().filter(|n| n.has_tag_name("testcase")))
        .collect();
    let failed = (steps.iter()).filter(|c| c.children().any(|n| n.has_tag_name("failure")));
    assert_eq!(failed.count(), REFUSED);
    assert_eq!(steps.len(), REFUSED + 500);
    let not_listed: usize = (xml.descendants())
        .filter(|n| n.attribute("name") == Some("ppcert.steps_not_listed"))
        .map(|n| n.attribute("value").unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(not_listed, EXCHANGES - REFUSED - 500);
    let quoted = (xml.descendants().filter(|n| n.has_tag_name("failure")))
        .filter(|n| n.text().is_some_and(|t| t.contains("→ HTTP")));
    assert_eq!(quoted.count(), REFUSED, "each failure quotes an answer");
}

//! What `ppcert proxy` holds a partner to, against a lenient server that accepts anything:
//! seeded mistakes appear as the named failed check, `--strict` refuses them without
//! forwarding (the default against production), and bytes pass unchanged.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use serde_json::json;

use super::proxy::{Partner, failed_checks, start_proxy, stop};
use crate::common::*;

type Hits = Arc<Mutex<Vec<(String, String)>>>;

/// A lenient server: takes anything, answers 201 with plausible ids, and keeps what it got.
async fn lenient() -> (String, Hits) {
    let hits: Hits = Arc::default();
    let kept = hits.clone();
    let router = axum::Router::new().fallback(move |method: axum::http::Method, uri: axum::http::Uri, body: Bytes| {
        let kept = kept.clone();
        async move {
            kept.lock().unwrap().push((format!("{method} {}", uri.path()), String::from_utf8_lossy(&body).into_owned()));
            let answer = match uri.path() {
                "/quotes" => json!({"data": {"id": "q_1", "reference": "R_1"}}),
                "/subscriptions" => json!({"data": {"contracts": [{"id": "ct_1", "productType": "WITHDRAWAL"}]}}),
                _ => json!({"data": {"id": "x_1", "status": "ACCEPTED"}}),
            };
            (StatusCode::CREATED, axum::Json(answer))
        }
    });
    (serve(router).await, hits)
}

/// Four mistakes a lenient staging lets through: a naive departure time, `firstName` under
/// `client`, a booking number subscribed twice, a claim minutes after its subscription.
async fn seed_mistakes(partner: &Partner) -> Vec<u16> {
    let mut naive = quote_body(1, 200.0, 30);
    naive["data"]["trips"][0]["journeys"][0]["flights"][0]["departureDate"] =
        json!("2031-05-01T10:00:00");
    let mut statuses = vec![partner.call("POST", "/quotes", Some(naive)).await.0];
    let mut casing = subscription_body("MISTAKE-1", &[("R_1", 1)]);
    casing["data"]["client"] =
        json!({"email": "ana@example.com", "firstName": "Ana", "lastName": "Lopez"});
    statuses.push(partner.call("POST", "/subscriptions", Some(casing)).await.0);
    for _ in 0..2 {
        statuses.push(
            partner
                .call(
                    "POST",
                    "/subscriptions",
                    Some(subscription_body("MISTAKE-2", &[("R_1", 1)])),
                )
                .await
                .0,
        );
    }
    statuses.push(
        partner
            .call("POST", "/contracts/ct_1/claims", Some(json!({"data": {}})))
            .await
            .0,
    );
    statuses
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_mistakes_are_named_even_when_the_server_accepts_them_and_strict_refuses_them() {
    for strict in [false, true] {
        let (upstream, hits) = lenient().await;
        let dir = tempfile::tempdir().unwrap();
        let extra: &[&str] = if strict { &["--strict"] } else { &[] };
        let (mut proxy, url) = start_proxy(dir.path(), &upstream, extra).await;
        let partner = Partner::at(url, "partner_token_0123456789");
        let statuses = seed_mistakes(&partner).await;
        assert_eq!(stop(&mut proxy).await, 1, "mistakes fail the verdict");
        let evidence = read_json(&dir.path().join("b/evidence.json"));
        let failed = failed_checks(&evidence);
        for (name, detail) in [
            (
                "request follows the spec's rules",
                "$.data.trips[0].journeys[0].flights[0].departureDate",
            ),
            (
                "request follows the spec's rules",
                "$.data.client.firstname",
            ),
            ("booking number not reused", "MISTAKE-2"),
            (
                "claim 24 h after its subscription, or claimDate on staging",
                "$.data.claimDate",
            ),
        ] {
            assert!(
                failed
                    .iter()
                    .any(|f| f.starts_with(name) && f.contains(detail)),
                "strict {strict}: no {name} naming {detail}: {failed:#?}"
            );
        }
        let forwarded: Vec<String> = hits
            .lock()
            .unwrap()
            .iter()
            .map(|(call, _)| call.clone())
            .collect();
        if strict {
            assert_eq!(
                statuses,
                [400, 400, 201, 400, 400],
                "only the clean first subscription passes"
            );
            assert_eq!(
                forwarded,
                ["POST /subscriptions"],
                "nothing violating was forwarded"
            );
        } else {
            assert!(statuses.iter().all(|s| *s == 201), "{statuses:?}");
            assert_eq!(forwarded.len(), 5, "{forwarded:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_and_answers_pass_byte_for_byte() {
    let seen: Arc<Mutex<Option<(HeaderMap, Bytes)>>> = Arc::default();
    let kept = seen.clone();
    let upstream = serve(
        axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
            let kept = kept.clone();
            async move {
                *kept.lock().unwrap() = Some((headers, body));
                (
                    StatusCode::ACCEPTED,
                    [("x-upstream", "yes"), ("content-type", "application/json")],
                    "{ \"data\" :  {\"id\":\"q 1\"}   }\n",
                )
            }
        }),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) = start_proxy(dir.path(), &format!("{upstream}/partner-api"), &[]).await;
    let sent = "{\"data\":{\"currency\":\"EUR\",  \"trips\":[]}}";
    let answer = http_client()
        .post(format!("{url}/partner-api/quotes?debug=1"))
        .header("authorization", "Bearer partner_token_0123456789")
        .header("x-partner-trace", "abc")
        .body(sent)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 202);
    assert_eq!(answer.headers()["x-upstream"], "yes");
    assert_eq!(
        answer.text().await.unwrap(),
        "{ \"data\" :  {\"id\":\"q 1\"}   }\n"
    );
    let (headers, body) = seen.lock().unwrap().clone().unwrap();
    assert_eq!(body, sent.as_bytes());
    assert_eq!(
        headers["authorization"], "Bearer partner_token_0123456789",
        "their own credentials pass through"
    );
    assert_eq!(headers["x-partner-trace"], "abc");
    stop(&mut proxy).await;
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(
        evidence["exchanges"][0]["url"],
        format!("{upstream}/partner-api/quotes?debug=1")
    );
    let recorded = evidence.to_string();
    assert!(!recorded.contains("partner_token_0123456789"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn against_production_strict_is_the_default() {
    let (upstream, hits) = lenient().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) =
        start_proxy(dir.path(), &upstream, &["--environment", "production"]).await;
    let partner = Partner::at(url, "partner_token_0123456789");
    let mut naive = quote_body(1, 200.0, 30);
    naive["data"]["trips"][0]["journeys"][0]["flights"][0]["departureDate"] =
        json!("2031-05-01T10:00:00");
    let (status, answer) = partner.call("POST", "/quotes", Some(naive)).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], "REFUSED_BY_PPCERT_PROXY");
    assert_eq!(
        partner
            .call("POST", "/quotes", Some(quote_body(1, 200.0, 30)))
            .await
            .0,
        201
    );
    stop(&mut proxy).await;
    assert_eq!(
        hits.lock().unwrap().len(),
        1,
        "only the clean quote reached production"
    );
}

/// A body that is JSON but not an object (a number, a string, `true`) is forwarded and
/// recorded, held to the spec's rules like any other: it once ended the proxy's handler with
/// a panic, and the partner got a closed connection instead of the staging's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_body_that_is_not_an_object_is_forwarded_and_judged() {
    let (upstream, hits) = lenient().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) = start_proxy(dir.path(), &upstream, &[]).await;
    let partner = Partner::at(url, "partner_token_0123456789");
    for body in [json!(5), json!("text"), json!(true)] {
        let (status, answer) = partner.call("POST", "/quotes", Some(body)).await;
        assert_eq!(status, 201, "{answer}");
    }
    stop(&mut proxy).await;
    assert_eq!(hits.lock().unwrap().len(), 3);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["exchanges"].as_array().unwrap().len(), 3);
    let failed = failed_checks(&evidence);
    assert_eq!(
        failed
            .iter()
            .filter(|c| c.contains("missing field `data`"))
            .count(),
        3,
        "{failed:?}"
    );
}

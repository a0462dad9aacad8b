//! The sandbox's webhook deliveries, through real HTTP on loopback: a certification run causes a
//! `contract.created` per contract and a `claim.updated` per claim status, each verified here
//! with an independent HMAC for every scheme; failed deliveries are retried on the documented,
//! bounded schedule; `ppcert serve --webhook-url` logs each attempt and never the secret.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use ppcert::sandbox::WebhookOptions;
use ppcert::webhook::scheme::Scheme;
use serde_json::Value;
use sha2::Sha256;
use tokio::io::AsyncBufReadExt;

use crate::common::*;

/// A Standard Webhooks secret: `whsec_` and base64; the other schemes use it as it is.
const SECRET: &[u8] = b"whsec_c2FuZGJveF8wMTIzNDU2Nzg5";
/// What the Standard Webhooks scheme keys its HMAC with: the base64 part, decoded.
const STANDARD_KEY: &[u8] = b"sandbox_0123456789";

type Received = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

/// A receiver that keeps every delivery and answers `answer(n)` to the nth (from 1).
async fn receiver(answer: fn(usize) -> StatusCode) -> (String, Received) {
    let received: Received = Arc::default();
    let kept = received.clone();
    let router = axum::Router::new().fallback(axum::routing::post(
        move |headers: HeaderMap, body: Bytes| {
            let kept = kept.clone();
            async move {
                let mut all = kept.lock().unwrap();
                all.push((headers, body));
                answer(all.len())
            }
        },
    ));
    (format!("{}/hooks", serve(router).await), received)
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .to_str()
        .unwrap()
        .to_string()
}

fn hmac(parts: &[&[u8]]) -> Vec<u8> {
    hmac_with(SECRET, parts)
}

fn hmac_with(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks the delivery's signature by recomputing it here, as a partner's receiver would.
fn assert_signed(scheme: Scheme, headers: &HeaderMap, body: &[u8]) {
    match scheme {
        Scheme::ProviderDocs => {
            assert_eq!(header(headers, "koala-signature"), hex(&hmac(&[body])));
            assert_eq!(header(headers, "webhook-version"), "v2");
        }
        Scheme::Github => assert_eq!(
            header(headers, "x-hub-signature-256"),
            format!("sha256={}", hex(&hmac(&[body])))
        ),
        Scheme::StandardWebhooks => {
            let id = header(headers, "webhook-id");
            let stamp = header(headers, "webhook-timestamp");
            let expected = base64::engine::general_purpose::STANDARD.encode(hmac_with(
                STANDARD_KEY,
                &[id.as_bytes(), b".", stamp.as_bytes(), b".", body],
            ));
            assert_eq!(
                header(headers, "webhook-signature"),
                format!("v1,{expected}")
            );
        }
    }
}

async fn sandbox_sending_to(
    url: &str,
    scheme: Scheme,
    retry: Duration,
) -> ppcert::sandbox::Sandbox {
    let mut webhooks = WebhookOptions::new(url, scheme, SECRET.to_vec());
    webhooks.retry_delays = vec![retry; 3];
    sandbox_with(ppcert::sandbox::SandboxOptions {
        claim_step: Duration::from_millis(50),
        webhooks: Some(webhooks),
        ..Default::default()
    })
    .await
}

/// Waits until `done` holds of what was received (at most 10 s).
async fn until(received: &Received, done: impl Fn(&[(HeaderMap, Bytes)]) -> bool) {
    for _ in 0..200 {
        if done(&received.lock().unwrap()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "deliveries never arrived: {} so far",
        received.lock().unwrap().len()
    );
}

fn events(received: &Received) -> Vec<Value> {
    received
        .lock()
        .unwrap()
        .iter()
        .map(|(_, body)| serde_json::from_slice(body).unwrap())
        .collect()
}

/// Per claim id, the statuses delivered, in order of arrival.
fn claim_statuses(events: &[Value]) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut statuses = std::collections::BTreeMap::<String, Vec<String>>::new();
    for event in events.iter().filter(|e| e["event"] == "claim.updated") {
        let claim = &event["data"]["claim"];
        statuses
            .entry(claim["id"].as_str().unwrap().to_string())
            .or_default()
            .push(claim["status"].as_str().unwrap().to_string());
    }
    statuses
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certification_run_causes_signed_deliveries_for_every_contract_and_claim_status() {
    let (url, received) = receiver(|_| StatusCode::OK).await;
    let sandbox = sandbox_sending_to(&url, Scheme::ProviderDocs, Duration::from_millis(20)).await;
    let (finished, _evidence, _dir) = run_against(&sandbox, "certification", &[]).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let claims = sandbox.counts()[&ppcert::models::Operation::Claim] as usize;
    let settled = ["REFUNDED", "MANUAL_VERIFICATION_NEEDED", "ACCEPTED"];
    until(&received, |all| {
        let events: Vec<Value> = all
            .iter()
            .map(|(_, b)| serde_json::from_slice(b).unwrap())
            .collect();
        let statuses = claim_statuses(&events);
        statuses.len() == claims
            && statuses.values().all(|s| {
                let last = s.last().unwrap().as_str();
                settled.contains(&last) && (last != "ACCEPTED" || s.len() == 1)
            })
    })
    .await;
    for (headers, body) in received.lock().unwrap().iter() {
        assert_signed(Scheme::ProviderDocs, headers, body);
    }
    let events = events(&received);
    let contracts: std::collections::BTreeSet<&str> = events
        .iter()
        .filter(|e| e["event"] == "contract.created")
        .map(|e| e["data"]["contract"]["id"].as_str().unwrap())
        .collect();
    let subscriptions = sandbox.counts()[&ppcert::models::Operation::Subscription] as usize;
    assert!(
        contracts.len() >= subscriptions,
        "{} contracts for {subscriptions} subscriptions",
        contracts.len()
    );
    let first = events
        .iter()
        .find(|e| e["event"] == "contract.created")
        .unwrap();
    for field in [
        "id",
        "createdAt",
        "coveredEvent",
        "subscription",
        "travelers",
        "product",
    ] {
        assert!(
            !first["data"]["contract"][field].is_null(),
            "contract.created lacks {field}: {first}"
        );
    }
    let with_bank_details = claim_statuses(&events)
        .into_values()
        .filter(|s| s.len() > 1)
        .collect::<Vec<_>>();
    assert!(
        !with_bank_details.is_empty(),
        "no claim moved past its first status"
    );
    for statuses in with_bank_details {
        assert_eq!(statuses, ["ACCEPTED", "REFUNDABLE", "REFUNDED"]);
    }
    let claim = events
        .iter()
        .find(|e| e["event"] == "claim.updated")
        .unwrap();
    for field in ["id", "status", "claimedAt", "compensation", "contract"] {
        assert!(
            !claim["data"]["claim"][field].is_null(),
            "claim.updated lacks {field}: {claim}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scheme_signs_so_that_an_independent_hmac_verifies_it() {
    for scheme in [Scheme::StandardWebhooks, Scheme::Github] {
        let (url, received) = receiver(|_| StatusCode::NO_CONTENT).await;
        let sandbox = sandbox_sending_to(&url, scheme, Duration::from_millis(20)).await;
        Api::new(&sandbox).subscribe("WH-SCHEME-1").await;
        until(&received, |all| !all.is_empty()).await;
        let (headers, body) = received.lock().unwrap()[0].clone();
        assert_signed(scheme, &headers, &body);
        let event: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(event["event"], "contract.created");
        assert_eq!(
            event["data"]["contract"]["subscription"]["bookingNumber"],
            "WH-SCHEME-1"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_delivery_is_retried_and_an_absent_receiver_is_given_up_on() {
    let (url, received) = receiver(|n| {
        if n == 1 {
            StatusCode::SERVICE_UNAVAILABLE
        } else {
            StatusCode::OK
        }
    })
    .await;
    let sandbox = sandbox_sending_to(&url, Scheme::ProviderDocs, Duration::from_millis(20)).await;
    Api::new(&sandbox).subscribe("WH-RETRY-1").await;
    until(&received, |all| all.len() >= 2).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let attempts = sandbox.webhook_deliveries();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    assert_eq!((attempts[0].attempt, attempts[0].status), (1, Some(503)));
    assert_eq!((attempts[1].attempt, attempts[1].status), (2, Some(200)));
    assert_eq!(attempts[0].delivery_id, attempts[1].delivery_id);
    let (first, second) = {
        let all = received.lock().unwrap();
        (all[0].1.clone(), all[1].1.clone())
    };
    assert_eq!(first, second, "a retry resends the same event");

    // Nobody listens there: every attempt fails, and they stop after the schedule's length.
    let closed = {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap()
    };
    let sandbox = sandbox_sending_to(
        &format!("http://{closed}/hooks"),
        Scheme::ProviderDocs,
        Duration::from_millis(10),
    )
    .await;
    Api::new(&sandbox).subscribe("WH-RETRY-2").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let attempts = sandbox.webhook_deliveries();
    assert_eq!(attempts.len(), 4, "one try and three retries: {attempts:?}");
    assert!(
        attempts
            .iter()
            .all(|a| a.status.is_none() && a.error.is_some())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_delivers_to_the_webhook_url_and_logs_each_attempt_without_the_secret() {
    let (url, received) = receiver(|_| StatusCode::OK).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret"), SECRET).unwrap();
    let mut child = ppcert_command(
        dir.path(),
        &[
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--webhook-url",
            &url,
            "--webhook-secret-file",
            "secret",
        ],
        None,
    )
    .kill_on_drop(true)
    .spawn()
    .unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // `ppcert serve` prints its address, then its token, each as a line's last word.
    let base = last_word(&mut stdout).await;
    let token = last_word(&mut stdout).await;
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let client = http_client();
    let quote = client
        .post(format!("{base}/quotes"))
        .bearer_auth(&token)
        .json(&quote_body(1, 100.0, 30))
        .send()
        .await
        .unwrap();
    let reference = quote.json::<Value>().await.unwrap()["data"]["reference"]
        .as_str()
        .unwrap()
        .to_string();
    let subscribed = client
        .post(format!("{base}/subscriptions"))
        .bearer_auth(&token)
        .json(&subscription_body("WH-SERVE-1", &[(&reference, 1)]))
        .send()
        .await
        .unwrap();
    assert_eq!(subscribed.status(), 201);
    until(&received, |all| !all.is_empty()).await;
    let (headers, body) = received.lock().unwrap()[0].clone();
    assert_signed(Scheme::ProviderDocs, &headers, &body);
    let mut logged = String::new();
    while !logged.contains("webhook evt_") {
        let line = tokio::time::timeout(Duration::from_secs(5), stderr.next_line())
            .await
            .expect("a log line per attempt")
            .unwrap()
            .unwrap();
        logged.push_str(&line);
        logged.push('\n');
    }
    assert!(
        logged.contains("contract.created booking WH-SERVE-1 attempt 1 → 200"),
        "{logged}"
    );
    assert!(
        !logged.contains(std::str::from_utf8(SECRET).unwrap()),
        "{logged}"
    );
    let _ = child.kill().await;
}

async fn last_word(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) -> String {
    let line = lines
        .next_line()
        .await
        .unwrap()
        .expect("a line from ppcert serve");
    line.rsplit(' ').next().unwrap().to_string()
}

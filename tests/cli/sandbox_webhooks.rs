//! Webhook deliveries caused through the `ppcert` binary: a certification run causes a
//! `contract.created` per contract and a `claim.updated` per claim status, each verified with an
//! independent HMAC; `ppcert serve --webhook-url` logs each attempt and never the secret. The
//! sandbox's own delivery rules are tested in its crate (`crates/ppcert-sandbox/tests`).

use std::time::Duration;

use axum::http::StatusCode;
use ppcert::webhook::scheme::Scheme;
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use crate::common::webhooks::*;
use crate::common::*;

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
        // Deliveries are concurrent, as a provider's are: a claim's statuses may arrive out
        // of order, so a claim is settled by what arrived, not by what arrived last.
        statuses.len() == claims
            && statuses.values().all(|s| {
                s.iter().any(|x| x == "REFUNDED")
                    || (s.len() == 1 && settled.contains(&s[0].as_str()))
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
    let timeline = ["ACCEPTED", "REFUNDABLE", "REFUNDED"];
    for mut statuses in with_bank_details {
        statuses.sort_by_key(|s| timeline.iter().position(|t| t == s));
        assert_eq!(statuses, timeline, "each status delivered once");
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

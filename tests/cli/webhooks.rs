//! `ppcert webhook listen` through real HTTP on loopback: valid deliveries (signed here with an
//! independent HMAC) are accepted, each forged kind is refused with 401, a replay is
//! acknowledged but not processed twice, and every delivery lands in the JSONL file.

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::common::webhooks::{hex, hmac_with};
use crate::common::*;

/// A Standard Webhooks secret (`whsec_` and base64); the other schemes use it as it is.
const SECRET: &str = "whsec_dGVzdF8wMTIzNDU2Nzg5";
/// The Standard Webhooks scheme's HMAC key: the base64 part, decoded.
const STANDARD_KEY: &[u8] = b"test_0123456789";

fn hmac(parts: &[&[u8]]) -> Vec<u8> {
    hmac_with(SECRET.as_bytes(), parts)
}

/// Starts `ppcert webhook listen` on an ephemeral port; returns it, its URL and the JSONL path.
pub async fn listen(scheme: &str, dir: &std::path::Path) -> (tokio::process::Child, String) {
    listen_with(scheme, dir, SECRET).await
}

/// As [`listen`], with the given secret.
pub async fn listen_with(
    scheme: &str,
    dir: &std::path::Path,
    secret: &str,
) -> (tokio::process::Child, String) {
    let mut child = ppcert_command(
        dir,
        &[
            "webhook",
            "listen",
            "--addr",
            "127.0.0.1:0",
            "--scheme",
            scheme,
            "--out",
            "events.jsonl",
        ],
        None,
    )
    .env("PPCERT_WEBHOOK_SECRET", secret)
    .kill_on_drop(true)
    .spawn()
    .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let first = lines.next_line().await.unwrap().unwrap();
    let url = first.rsplit(' ').next().unwrap().to_string();
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

async fn post(url: &str, headers: &[(&str, String)], body: &[u8]) -> u16 {
    let mut request = http_client()
        .post(format!("{url}/hooks"))
        .header("content-type", "application/json")
        .body(body.to_vec());
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    request.send().await.unwrap().status().as_u16()
}

fn verdicts(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["verdict"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_accepts_valid_provider_deliveries_and_refuses_each_forged_kind() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = listen("provider-docs", dir.path()).await;
    let event = json!({"event": "claim.updated", "data": {"claim": {"status": "ACCEPTED",
        "contract": {"subscription": {"bookingNumber": "PP-1"}}}}});
    let body = event.to_string().into_bytes();
    let signed = vec![
        ("koala-signature", hex(&hmac(&[&body]))),
        ("webhook-version", "v2".to_string()),
    ];
    assert_eq!(post(&url, &signed, &body).await, 200, "valid");
    assert_eq!(
        post(&url, &signed, &body).await,
        200,
        "a replay is acknowledged"
    );
    let wrong = vec![("koala-signature", hex(&[0u8; 32]))];
    assert_eq!(post(&url, &wrong, &body).await, 401, "wrong signature");
    assert_eq!(post(&url, &[], &body).await, 401, "missing signature");
    let altered = br#"{"event": "claim.updated", "data": {"claim": {"status": "REFUNDED"}}}"#;
    assert_eq!(
        post(&url, &signed, altered).await,
        401,
        "body altered after signing"
    );
    child.kill().await.unwrap();
    assert_eq!(
        verdicts(dir.path()),
        ["accepted", "duplicate", "rejected", "rejected", "rejected"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_checks_standard_webhooks_timestamps_and_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = listen("standard-webhooks", dir.path()).await;
    let body = br#"{"event": "contract.created", "data": {"contract": {"id": "c1"}}}"#;
    let signed = |id: &str, at: i64| {
        let stamp = at.to_string();
        let mac = hmac_with(
            STANDARD_KEY,
            &[id.as_bytes(), b".", stamp.as_bytes(), b".", body],
        );
        vec![
            ("webhook-id", id.to_string()),
            ("webhook-timestamp", stamp),
            (
                "webhook-signature",
                format!(
                    "v1,{}",
                    base64::engine::general_purpose::STANDARD.encode(mac)
                ),
            ),
        ]
    };
    let now = chrono::Utc::now().timestamp();
    assert_eq!(post(&url, &signed("msg_1", now), body).await, 200);
    assert_eq!(
        post(&url, &signed("msg_1", now), body).await,
        200,
        "replay by id"
    );
    assert_eq!(
        post(&url, &signed("msg_2", now - 3600), body).await,
        401,
        "stale"
    );
    child.kill().await.unwrap();
    assert_eq!(verdicts(dir.path()), ["accepted", "duplicate", "rejected"]);
}

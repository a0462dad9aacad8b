//! A webhook receiver on loopback and an independent signature check, for tests of deliveries.
//!
//! The check recomputes each scheme's HMAC here with the `hmac` crate, as a partner's receiver
//! would, instead of calling the models crate's `verify`: a test that used the code it tests
//! to check itself could not fail when both are wrong.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use super::servers::{fast_options, sandbox_with, serve};
use crate::models::webhook::Scheme;
use crate::options::SandboxOptions;
use crate::server::Sandbox;
use crate::webhooks::WebhookOptions;

/// The webhook secret every delivery test signs with: a Standard Webhooks secret, `whsec_`
/// and base64; the other schemes use it as it is.
pub const SECRET: &[u8] = b"whsec_c2FuZGJveF8wMTIzNDU2Nzg5";
/// What the Standard Webhooks scheme keys its HMAC with: the base64 part, decoded.
const STANDARD_KEY: &[u8] = b"sandbox_0123456789";

/// Every delivery a receiver got, in order of arrival: headers and raw body.
pub type Received = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

/// A receiver that keeps every delivery and answers `answer(n)` to the nth (from 1); returns
/// its URL (`…/hooks`) and what it received.
pub async fn receiver(answer: fn(usize) -> StatusCode) -> (String, Received) {
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

/// HMAC-SHA256 of `parts` in order, keyed with `key`, computed here (not by the code tested).
pub fn hmac_with(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().to_vec()
}

/// Lower-case hex, as the hex signature schemes write it.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks the delivery's signature by recomputing it here, as a partner's receiver would.
pub fn assert_signed(scheme: Scheme, headers: &HeaderMap, body: &[u8]) {
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

/// A sandbox delivering to `url` under `scheme` with [`SECRET`], retrying three times after
/// `retry` each, its claims moving on every 50 ms.
pub async fn sandbox_sending_to(url: &str, scheme: Scheme, retry: Duration) -> Sandbox {
    let mut webhooks = WebhookOptions::new(url, scheme, SECRET.to_vec());
    webhooks.retry_delays = vec![retry; 3];
    sandbox_with(SandboxOptions {
        webhooks: Some(webhooks),
        ..fast_options()
    })
    .await
}

/// Waits until `done` holds of what was received (at most 10 s).
pub async fn until(received: &Received, done: impl Fn(&[(HeaderMap, Bytes)]) -> bool) {
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

/// Every delivered event's body, parsed.
pub fn events(received: &Received) -> Vec<Value> {
    received
        .lock()
        .unwrap()
        .iter()
        .map(|(_, body)| serde_json::from_slice(body).unwrap())
        .collect()
}

/// Per claim id, the statuses delivered, in order of arrival.
pub fn claim_statuses(events: &[Value]) -> BTreeMap<String, Vec<String>> {
    let mut statuses = BTreeMap::<String, Vec<String>>::new();
    for event in events.iter().filter(|e| e["event"] == "claim.updated") {
        let claim = &event["data"]["claim"];
        statuses
            .entry(claim["id"].as_str().unwrap().to_string())
            .or_default()
            .push(claim["status"].as_str().unwrap().to_string());
    }
    statuses
}

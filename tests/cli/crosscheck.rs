//! Evidence the provider can cross-check against its own logs: every request carries a W3C
//! `traceparent` recorded in its exchange, and the signed predicate lists the identifiers the
//! staging issued and the certificate it presented.

use std::path::Path;

use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::pki_types::pem::PemObject;

use crate::attest::keygen;
use crate::common::*;

/// The statement inside a bundle's attestation.
fn statement(bundle: &Path) -> serde_json::Value {
    use base64::Engine;
    let envelope = read_json(&bundle.join("attestation.intoto.json"));
    let payload = base64::engine::general_purpose::STANDARD
        .decode(envelope["payload"].as_str().unwrap())
        .unwrap();
    serde_json::from_slice(&payload).unwrap()
}

/// The W3C format of version 00: `00-<32 hex>-<16 hex>-<2 hex>`, lowercase, ids not zero.
fn valid_traceparent(value: &str) -> bool {
    let fields: Vec<&str> = value.split('-').collect();
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    fields.len() == 4
        && fields[0] == "00"
        && hex(fields[1], 32)
        && fields[1].bytes().any(|b| b != b'0')
        && hex(fields[2], 16)
        && fields[2].bytes().any(|b| b != b'0')
        && hex(fields[3], 2)
}

fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn every_exchange_carries_a_traceparent_and_the_predicate_lists_what_the_sandbox_issued() {
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keygen(dir.path(), "key").await;
    let run = Run::embedded().args(&["--sign-key", "key"]);
    let (finished, evidence) = run.evidence_in(dir.path()).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let exchanges = evidence["exchanges"].as_array().unwrap();
    assert!(exchanges.len() >= 28, "{}", exchanges.len());
    let mut traces = std::collections::BTreeSet::new();
    for exchange in exchanges {
        let sent = exchange["request"]["headers"]["traceparent"]
            .as_str()
            .unwrap_or_default();
        assert!(valid_traceparent(sent), "{exchange}");
        traces.insert(sent[3..35].to_string());
    }
    assert!(traces.len() > 1, "a trace per call, not one per run");

    let issued = &statement(&dir.path().join("b"))["predicate"]["issued"];
    let bookings = evidence["bookings"].as_array().unwrap();
    let listed = strings(&issued["booking_numbers"]);
    for booking in bookings {
        let number = booking["booking_number"].as_str().unwrap().to_string();
        assert!(listed.contains(&number), "{number} not in {issued}");
        if let Some(contract) = booking["contract_id"].as_str() {
            assert!(strings(&issued["contract_ids"]).contains(&contract.to_string()));
        }
        for quote in booking["quotes"].as_array().unwrap() {
            assert!(
                issued["quotes"].as_array().unwrap().contains(quote),
                "{quote} not in {issued}"
            );
        }
    }
    assert!(!strings(&issued["contract_ids"]).is_empty(), "{issued}");
    let claims = strings(&issued["claim_ids"]);
    assert!(claims.len() >= 5, "the batch's claims: {issued}");
    let journal = std::fs::read_to_string(dir.path().join("b/journal.jsonl")).unwrap();
    assert!(claims.iter().all(|id| journal.contains(id.as_str())));
    // Over plain HTTP there is no certificate to list.
    assert_eq!(issued["tls_certificate_sha256"], serde_json::json!([]));
    let verified = crate::attest::verify_with(dir.path(), &dir.path().join("b"), &public).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_predicate_lists_the_stagings_certificate_and_request_ids() {
    let base = crate::tls::private_ca_staging().await;
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keygen(dir.path(), "key").await;
    let ca = crate::tls::fixture("private-ca.pem");
    let run = Run::at(&base, "a-staging-token-0123456789")
        .scenario("smoke")
        .args(&["--cacert", ca.to_str().unwrap(), "--sign-key", "key"]);
    let (finished, _) = run.evidence_in(dir.path()).await;
    assert!(finished.stderr.contains("signed: "), "{}", finished.stderr);
    let leaf = CertificateDer::pem_file_iter(crate::tls::fixture("staging.pem"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let issued = &statement(&dir.path().join("b"))["predicate"]["issued"];
    assert_eq!(
        strings(&issued["tls_certificate_sha256"]),
        vec![ppcert::digest::sha256_hex(leaf.as_ref())],
        "{issued}"
    );
    assert_eq!(
        strings(&issued["answer_ids"]["x-request-id"]),
        vec![crate::tls::REQUEST_ID.to_string()],
        "{issued}"
    );
    let verified = crate::attest::verify_with(dir.path(), &dir.path().join("b"), &public).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

/// The proxy forwards the partner's own `traceparent` and gives one to a request without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_forwards_a_traceparent_and_adds_one_when_missing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr, _) = crate::listeners::start("proxy", dir.path(), &[]).await;
    let client = reqwest::Client::new();
    let own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    for traceparent in [None, Some(own)] {
        let mut request = client
            .post(format!("http://{addr}/quotes"))
            .json(&serde_json::json!({"bookingNumber": "TRACE-1"}));
        if let Some(value) = traceparent {
            request = request.header("traceparent", value);
        }
        request.send().await.unwrap();
    }
    interrupt(&child).await;
    crate::listeners::ended(&mut child, "proxy").await;
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let sent: Vec<String> = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let value = &e["request"]["headers"]["traceparent"];
            value.as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(valid_traceparent(&sent[0]) && sent[0] != own, "{sent:?}");
    assert_eq!(sent[1], own);
}

//! `ppcert run --webhooks` (the embedded sandbox delivers to the run) and `--webhook-listen`
//! (a staging delivers to the run): the evidence's `webhooks` section lists every delivery with
//! its signature verdict and, per claim, the statuses polled beside those delivered; the
//! reports show it; webhooks never change the verdict.

use ppcert::sandbox::{SandboxOptions, WebhookOptions};
use ppcert::webhook::scheme::Scheme;
use serde_json::Value;

use crate::common::*;

/// A port free on 127.0.0.2, for `--webhook-listen` to bind again a moment later. Not on
/// 127.0.0.1: there every outgoing connection of the tests running alongside takes an
/// ephemeral port, and one took this very port in between often enough to fail CI ("Address
/// already in use"); nothing else here binds or connects from 127.0.0.2.
fn free_loopback_addr() -> String {
    let socket = std::net::TcpListener::bind("127.0.0.2:0").unwrap();
    socket.local_addr().unwrap().to_string()
}

fn claims(evidence: &Value) -> &Vec<Value> {
    evidence["webhooks"]["claims"].as_array().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_webhooks_shows_every_claims_delivered_statuses_in_the_evidence_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert(
        dir.path(),
        &["run", "--webhooks", "--out", "b", "--seed", "7"],
        None,
    )
    .await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    assert!(
        finished
            .stderr
            .contains("webhooks: receiving on http://127.0.0.1:"),
        "{}",
        finished.stderr
    );
    let bundle = dir.path().join("b");
    let evidence = read_json(&bundle.join("evidence.json"));
    let webhooks = &evidence["webhooks"];
    assert_eq!(webhooks["scheme"], "provider-docs");
    assert_eq!(webhooks["rejected"], 0);
    let claimed = evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == "claim")
        .unwrap()["succeeded"]
        .as_u64()
        .unwrap() as usize;
    assert_eq!(claims(&evidence).len(), claimed, "{webhooks}");
    for claim in claims(&evidence) {
        assert!(
            !claim["delivered"].as_array().unwrap().is_empty(),
            "no webhook for {claim}"
        );
        assert!(!claim["polled"].as_array().unwrap().is_empty(), "{claim}");
        assert_eq!(claim["all_polled_delivered"], true, "{claim}");
    }
    let events = webhooks["events"].as_array().unwrap();
    assert_eq!(
        webhooks["received"].as_u64().unwrap() as usize,
        events.len()
    );
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "contract.created" && e["verdict"] == "accepted")
    );
    let journaled = std::fs::read_to_string(bundle.join("webhooks.jsonl")).unwrap();
    assert_eq!(
        journaled.lines().count(),
        events.len(),
        "every delivery is on disk too"
    );
    let manifest = std::fs::read_to_string(bundle.join("MANIFEST.sha256")).unwrap();
    assert!(manifest.contains("  webhooks.jsonl"), "{manifest}");
    let booking = claims(&evidence)[0]["booking_number"].as_str().unwrap();
    let markdown = std::fs::read_to_string(bundle.join("report.md")).unwrap();
    assert!(markdown.contains("### Webhooks ("), "{markdown}");
    assert!(
        markdown
            .lines()
            .any(|l| l.contains(booking) && l.contains("| yes |")),
        "{markdown}"
    );
    let html = std::fs::read_to_string(bundle.join("report.html")).unwrap();
    assert!(html.contains("id=\"webhooks\""));
    assert!(html.contains("claim statuses delivered by webhook"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_listen_verifies_a_stagings_deliveries_and_records_forged_ones_as_rejected() {
    for (sender_secret, accepted) in [
        ("whsec_c3RhZ2luZ18wMTIzNDU2Nzg5", true),
        ("whsec_c29tZW9uZV9lbHNlXzAwMA==", false),
    ] {
        let addr = free_loopback_addr();
        let mut webhooks = WebhookOptions::new(
            format!("http://{addr}/hooks"),
            Scheme::StandardWebhooks,
            sender_secret.as_bytes().to_vec(),
        );
        webhooks.retry_delays = vec![];
        let staging = sandbox_with(SandboxOptions {
            webhooks: Some(webhooks),
            ..fast_options()
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let base = staging.base_url();
        let args = run_args(
            &base,
            "b",
            &[
                "--scenario",
                "change-for-any-reason",
                "--webhook-listen",
                &addr,
                "--webhook-scheme",
                "standard-webhooks",
            ],
        );
        let output = ppcert_command(dir.path(), &args, Some(staging.token()))
            .env("PPCERT_WEBHOOK_SECRET", "whsec_c3RhZ2luZ18wMTIzNDU2Nzg5")
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(0),
            "webhooks never change the verdict: {stderr}"
        );
        let evidence = read_json(&dir.path().join("b/evidence.json"));
        let webhooks = &evidence["webhooks"];
        let events = webhooks["events"].as_array().unwrap();
        assert!(!events.is_empty(), "{webhooks}");
        if accepted {
            assert_eq!(webhooks["rejected"], 0, "{webhooks}");
            // Deliveries may trail polling by moments, and the run does not wait for them;
            // they are concurrent, so they may arrive out of order: what arrived is the start
            // of the claim's timeline, each status once.
            let timeline = ["ACCEPTED", "REFUNDABLE", "REFUNDED"];
            for claim in claims(&evidence) {
                assert_eq!(
                    claim["polled"].as_array().unwrap().last().unwrap(),
                    "REFUNDED",
                    "{claim}"
                );
                let mut delivered: Vec<&str> = (claim["delivered"].as_array().unwrap().iter())
                    .filter_map(Value::as_str)
                    .collect();
                delivered.sort_by_key(|d| timeline.iter().position(|t| t == d));
                assert!(
                    !delivered.is_empty() && delivered.iter().zip(timeline).all(|(d, t)| *d == t),
                    "{claim}"
                );
            }
        } else {
            assert_eq!(
                webhooks["rejected"].as_u64().unwrap() as usize,
                events.len(),
                "{webhooks}"
            );
            assert!(
                events
                    .iter()
                    .all(|e| e["reason"].as_str().unwrap().contains("signature")),
                "{webhooks}"
            );
            // Forged deliveries keep their metadata only: no body, no event, in the evidence
            // and in the bundle's webhooks.jsonl.
            assert!(
                events
                    .iter()
                    .all(|e| e["body"].is_null() && e["event"].is_null()),
                "{webhooks}"
            );
            let kept = std::fs::read_to_string(dir.path().join("b/webhooks.jsonl")).unwrap();
            assert!(!kept.contains("claim.updated") && !kept.contains("contract.created"));
            assert!(
                claims(&evidence)
                    .iter()
                    .all(|c| c["delivered"].as_array().unwrap().is_empty())
            );
        }
        assert!(
            !String::from_utf8_lossy(&output.stdout).contains("whsec_")
                && !stderr.contains("whsec_")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_against_a_staging_must_say_where_to_listen() {
    let dir = tempfile::tempdir().unwrap();
    let args = run_args("http://127.0.0.1:9/", "b", &["--webhooks"]);
    let finished = ppcert(dir.path(), &args, Some("tok_0123456789abcdef")).await;
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("--webhook-listen"),
        "{}",
        finished.stderr
    );
}

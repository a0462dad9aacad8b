//! `ppcert webhook send` grading receivers through real HTTP on loopback: `ppcert webhook
//! listen` (a correct receiver) passes under every scheme; a receiver that skips the signature
//! check, one that crashes, and an address where nobody listens each fail with the documented
//! exit code and the failed deliveries named in the table and in JUnit.

use axum::http::StatusCode;

use crate::common::*;
use crate::webhooks::listen;

async fn send(url: &str, scheme: &str, dir: &std::path::Path) -> Finished {
    let args = [
        "webhook",
        "send",
        "--url",
        url,
        "--scheme",
        scheme,
        "--junit",
        "webhooks.xml",
    ];
    let output = ppcert_command(dir, &args, None)
        .env("PPCERT_WEBHOOK_SECRET", "whsec_dGVzdF8wMTIzNDU2Nzg5")
        .output()
        .await
        .unwrap();
    finished(output)
}

/// The failed testcases' names in the JUnit file.
fn junit_failures(dir: &std::path::Path) -> Vec<String> {
    let xml = std::fs::read_to_string(dir.join("webhooks.xml")).unwrap();
    let document = roxmltree::Document::parse(&xml).unwrap();
    document
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter(|n| n.children().any(|c| c.has_tag_name("failure")))
        .map(|n| n.attribute("name").unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_correct_receiver_passes_under_every_scheme() {
    for scheme in ["provider-docs", "standard-webhooks", "github"] {
        let dir = tempfile::tempdir().unwrap();
        let (_listener, url) = listen(scheme, dir.path()).await;
        let finished = send(&format!("{url}/hooks"), scheme, dir.path()).await;
        assert_eq!(
            finished.code, 0,
            "{scheme}: {}\n{}",
            finished.stdout, finished.stderr
        );
        assert!(junit_failures(dir.path()).is_empty());
        for row in [
            "valid claim.updated REFUNDABLE",
            "wrong signature",
            "body altered after signing",
            "unknown event name",
        ] {
            assert!(
                finished.stdout.contains(row),
                "{scheme}: no row {row}: {}",
                finished.stdout
            );
        }
        assert!(
            finished.stdout.contains("cannot tell"),
            "the replay's limit is said: {}",
            finished.stdout
        );
        if scheme == "standard-webhooks" {
            assert!(
                finished.stdout.contains("timestamp 10 minutes old"),
                "{}",
                finished.stdout
            );
        }
        assert!(!finished.stdout.contains("dGVzdF8w") && !finished.stderr.contains("dGVzdF8w"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_accepts_forged_deliveries_fails() {
    let careless =
        serve(axum::Router::new().fallback(axum::routing::post(|| async { StatusCode::OK }))).await;
    let dir = tempfile::tempdir().unwrap();
    let finished = send(&format!("{careless}/hooks"), "provider-docs", dir.path()).await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    let failures = junit_failures(dir.path());
    assert_eq!(
        failures,
        [
            "wrong signature",
            "missing signature",
            "body altered after signing"
        ],
        "{}",
        finished.stdout
    );
    assert!(
        finished
            .stdout
            .contains("FAILED: expected non-2xx, got 200"),
        "{}",
        finished.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_crashes_fails_and_an_absent_one_is_unreachable() {
    let crashing = serve(axum::Router::new().fallback(axum::routing::post(|| async {
        StatusCode::INTERNAL_SERVER_ERROR
    })))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let finished = send(&format!("{crashing}/hooks"), "github", dir.path()).await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    let failures = junit_failures(dir.path());
    assert!(
        failures.contains(&"valid contract.created".to_string()),
        "{failures:?}"
    );
    assert!(
        failures.contains(&"malformed JSON, correctly signed".to_string()),
        "{failures:?}"
    );
    assert!(
        !failures.contains(&"wrong signature".to_string()),
        "{failures:?}"
    );

    let closed = {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap()
    };
    let finished = send(
        &format!("http://{closed}/hooks"),
        "provider-docs",
        dir.path(),
    )
    .await;
    assert_eq!(finished.code, 4, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished.stderr.contains("nothing answered"),
        "{}",
        finished.stderr
    );
}

//! Issue 39's first done-when: a staging with trailing-slash paths, a required version header,
//! decimal-string amounts, UTC-only date-times, gzip answers and a `PUT` flight-status call,
//! all at once, certified with transport.md's config alone (no date arithmetic in it), its
//! counts equal to the staging's.

use ppcert::models::Operation;
use ppcert::sandbox::{DeltaShape, Layout, Quirks, SandboxOptions, Transport};

use crate::common::*;

const CONFIG: &str = "# ppcert.toml: a staging behind a gateway";

fn gateway_staging() -> SandboxOptions {
    SandboxOptions {
        layout: Layout {
            price_delta: DeltaShape::String,
            ..Layout::default()
        },
        transport: Transport {
            gzip: true,
            required_headers: vec![("X-Api-Version".into(), "2".into())],
            ..Transport::default()
        },
        quirks: Quirks {
            trailing_slash: true,
            utc_only: true,
            flight_status_put: true,
        },
        ..fast_options()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_staging_with_all_six_is_certified_from_the_docs_alone() {
    let sandbox = sandbox_with(gateway_staging()).await;
    let config = toml_block(include_str!("../../docs/transport.md"), CONFIG);
    let (evidence, _dir) = certified(&sandbox, &config).await;
    assert!(every_requirement_met(&evidence));
    // Each of the six was met, not stepped around: every call slashed and asking for gzip,
    // no bare path redirected, no offset refused, the reports made by PUT.
    let seen = sandbox.quirks_seen();
    let calls = sandbox.requests_received();
    assert!(calls > 0);
    assert_eq!(seen.slashed, calls, "{seen:?}");
    assert_eq!(seen.gzip_accepted, calls, "{seen:?}");
    assert_eq!((seen.redirected, seen.not_utc), (0, 0), "{seen:?}");
    let reports = sandbox.counts()[&Operation::FlightCancellation];
    assert!(reports >= 3);
    assert_eq!(seen.flight_status_puts, reports, "{seen:?}");
}

/// transport.md's `ppcert serve` line for that staging, and the same flags as arguments (with
/// a fast claim step).
const SERVE_LINE: &str = r#"ppcert serve --trailing-slash --require-header "X-Api-Version: 2" --delta-shape string --utc-only --gzip --flight-status-put"#;
const SERVE_FLAGS: [&str; 9] = [
    "--trailing-slash",
    "--require-header",
    "X-Api-Version: 2",
    "--delta-shape",
    "string",
    "--utc-only",
    "--gzip",
    "--flight-status-put",
    "--claim-step-ms=50",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ppcert_serve_with_the_documented_flags_is_that_staging() {
    let page = include_str!("../../docs/transport.md");
    assert!(page.replace(" \\\n  ", " ").contains(SERVE_LINE));
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["serve", "--addr", "127.0.0.1:0"];
    args.extend(SERVE_FLAGS);
    let (mut child, base, token, _) = crate::serve::serving(dir.path(), &args).await;
    let (finished, evidence, _run) = Run::at(&base, &token)
        .config(&toml_block(page, CONFIG))
        .args(&["--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    for exchange in evidence["exchanges"].as_array().unwrap() {
        assert!(
            exchange["url"].as_str().unwrap().ends_with('/'),
            "{exchange}"
        );
        if exchange["response"]["status"] != 204 {
            assert_eq!(exchange["response"]["encoding"], "gzip", "{exchange}");
        }
        if exchange["operation"] == "flight_cancellation" {
            assert_eq!(exchange["method"], "PUT", "{exchange}");
        }
    }
    // The run sent only Z instants; the staging would have refused an offset.
    let offset = ppcert::sandbox::testing::http_client()
        .post(format!("{base}/quotes/"))
        .bearer_auth(&token)
        .header("X-Api-Version", "2")
        .header("Content-Type", "application/json")
        .body(quote_body(1, 100.0, 30).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(offset.status(), 400);
    assert!(
        offset
            .text()
            .await
            .unwrap()
            .contains("is not a UTC instant")
    );
    child.kill().await.unwrap();
}

//! `ppcert run` end to end: shipped scenarios, layouts, the ledger against the sandbox's own counts.

use ppcert::sandbox::{ContractsLayout, DeltaShape, Layout, SandboxOptions};
use serde_json::Value;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_run_passes_on_the_embedded_sandbox_and_writes_its_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert(dir.path(), &["run"], None).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished.stdout.contains("verdict PASSED"),
        "{}",
        finished.stdout
    );
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "one bundle under reports/<run-id>");
    let evidence = read_json(&runs[0].join("evidence.json"));
    assert_eq!(evidence["schema_version"], 1);
    assert_eq!(evidence["verdict"], "passed");
    assert_eq!(evidence["run"]["target"]["embedded"], true);
    assert!(
        evidence["run"]["notice"]
            .as_str()
            .unwrap()
            .contains("not certification evidence")
    );
    let required: Vec<(String, u64)> = evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["operation"].as_str().unwrap().to_string(),
                r["required"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        required,
        [
            ("quote", 5),
            ("subscription", 5),
            ("update", 5),
            ("quote_deletion", 5),
            ("claim", 5),
            ("flight_cancellation", 3)
        ]
        .map(|(o, n)| (o.to_string(), n))
    );
    assert!(every_requirement_met(&evidence));
    assert!(runs[0].join("journal.jsonl").exists());
    let html = std::fs::read_to_string(runs[0].join("report.html")).unwrap();
    assert!(
        html.contains("not certification evidence"),
        "the embedded-sandbox banner"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shipped_scenario_passes_and_its_counts_equal_the_sandboxes() {
    for scenario in [
        "certification",
        "smoke",
        "multi-planning",
        "change-for-any-reason",
        "conformance",
    ] {
        let sandbox = sandbox_with(fast_options()).await;
        let (finished, evidence, _dir) = run_against(&sandbox, scenario, &[]).await;
        assert_eq!(
            finished.code, 0,
            "{scenario}: {}\n{}",
            finished.stdout, finished.stderr
        );
        assert_eq!(evidence["verdict"], "passed", "{scenario}");
        assert_eq!(
            evidence_counts(&evidence),
            sandbox_counts(&sandbox),
            "{scenario}"
        );
        assert_eq!(evidence["run"]["target"]["environment"], "staging");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_refusals_are_checked_and_never_counted() {
    let sandbox = sandbox_with(fast_options()).await;
    let (_, evidence, _dir) = run_against(&sandbox, "conformance", &[]).await;
    let refusals: Vec<(String, u64)> = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["expected_error"] == true)
        .map(|e| {
            (
                e["step"].as_str().unwrap().to_string(),
                e["response"]["status"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("bad_token", 401),
        ("missing_field", 400),
        ("reused_booking_number", 409),
        ("reused_quote_reference", 409),
        ("unknown_contract", 404),
        ("unknown_booking", 404),
        ("past_date", 400),
    ];
    assert_eq!(
        refusals,
        expected.map(|(s, n)| (format!("expect_error:{s}"), n))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_layout_variant_is_read_and_recorded() {
    let variants = [
        Layout {
            wrap: false,
            ..Layout::default()
        },
        Layout {
            contracts: ContractsLayout::Nested,
            ..Layout::default()
        },
        Layout {
            contracts: ContractsLayout::List,
            update_status: 200,
            ..Layout::default()
        },
        Layout {
            price_delta: DeltaShape::String,
            delete_status: 200,
            ..Layout::default()
        },
        Layout {
            price_delta: DeltaShape::Object,
            delete_status: 202,
            wrap: false,
            ..Layout::default()
        },
    ];
    for layout in variants {
        let sandbox = sandbox_with(SandboxOptions {
            layout,
            ..fast_options()
        })
        .await;
        let (finished, evidence, _dir) = run_against(&sandbox, "certification", &[]).await;
        assert_eq!(finished.code, 0, "{layout:?}: {}", finished.stdout);
        assert_eq!(
            evidence_counts(&evidence),
            sandbox_counts(&sandbox),
            "{layout:?}"
        );
        let layouts: Vec<&str> = evidence["exchanges"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["layout"].as_str())
            .collect();
        let expected = if layout.wrap {
            "wrapped in data"
        } else {
            "bare body"
        };
        assert!(
            layouts.iter().all(|l| l.starts_with(expected)),
            "{layout:?}: {layouts:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_url_path_prefix_is_kept() {
    let sandbox = sandbox_with(SandboxOptions {
        path_prefix: Some("/partner-api".into()),
        ..fast_options()
    })
    .await;
    assert!(sandbox.base_url().ends_with("/partner-api"));
    let (finished, evidence, _dir) = run_against(&sandbox, "smoke", &[]).await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
    let url = evidence["exchanges"][0]["url"].as_str().unwrap();
    assert!(url.ends_with("/partner-api/quotes"), "{url}");
}

/// A base URL that drops the API's path prefix meets a 404 on its first call: the run stops
/// there with exit 4 naming the path prefix (as `check-token` does), instead of running the
/// whole batch into 404s and exiting 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_base_url_without_the_path_prefix_stops_at_the_first_404_with_exit_4() {
    let sandbox = sandbox_with(SandboxOptions {
        path_prefix: Some("/partner-api".into()),
        ..fast_options()
    })
    .await;
    let root = sandbox
        .base_url()
        .trim_end_matches("/partner-api")
        .to_string();
    let (finished, evidence, _dir) = Run::at(&root, sandbox.token()).evidence().await;
    assert_eq!(finished.code, 4, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished.stderr.contains("path prefix") && finished.stderr.contains("404"),
        "{}",
        finished.stderr
    );
    // Only the leading quotes that may go before the first answer were sent, never the batch.
    let sent = evidence["exchanges"].as_array().unwrap().len();
    assert!(sent <= 4, "{sent} exchanges sent after the first 404");
    assert!(
        sandbox.requests_received() <= 4,
        "{}",
        sandbox.requests_received()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_overrides_in_ppcert_toml_are_used() {
    let sandbox = sandbox_with(fast_options()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ppcert.toml"),
        r#"
[partner]
name = "Example Travel"

[endpoints.flight_cancellation]
method = "POST"
path = "/flight-cancellation-reports/{{ booking.number }}"
"#,
    )
    .unwrap();
    let base = sandbox.base_url();
    let finished = ppcert(
        dir.path(),
        &run_args(&base, "b", &["--backoff-ms", "1"]),
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(
        finished.code, 1,
        "the overridden path does not exist on the sandbox: {}",
        finished.stdout
    );
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["run"]["partner"]["name"], "Example Travel");
    let report = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["operation"] == "flight_cancellation")
        .unwrap();
    assert!(
        report["url"]
            .as_str()
            .unwrap()
            .contains("/flight-cancellation-reports/PP-"),
        "{}",
        report["url"]
    );
    let unmet: Vec<&Value> = evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["met"] == false)
        .collect();
    assert_eq!(unmet.len(), 1);
    assert_eq!(unmet[0]["operation"], "flight_cancellation");
    assert!(
        finished
            .stdout
            .contains("flight-cancellation#1: step 3 (`report_flight_cancellation`) failed"),
        "{}",
        finished.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partners_without_flights_skip_flight_cancellations() {
    let sandbox = sandbox_with(fast_options()).await;
    let (finished, evidence, _dir) = run_against(
        &sandbox,
        "certification",
        &["--no-flight-cancellations", "--seed", "42"],
    )
    .await;
    assert_eq!(finished.code, 0);
    assert_eq!(evidence["run"]["seed"], 42);
    assert_eq!(evidence["run"]["partner"]["flight_seller"], false);
    assert!(
        evidence["requirements"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["operation"] != "flight_cancellation")
    );
    assert!(
        !sandbox
            .counts()
            .contains_key(&ppcert::models::Operation::FlightCancellation)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_multiplies_every_flow() {
    let sandbox = sandbox_with(fast_options()).await;
    let (finished, evidence, _dir) = run_against(
        &sandbox,
        "certification",
        &["--scale", "3", "--concurrency", "8"],
    )
    .await;
    assert_eq!(finished.code, 0);
    assert_eq!(evidence["flows"].as_array().unwrap().len(), 39);
    assert_eq!(sandbox_counts(&sandbox)["subscription"], 24);
    assert_eq!(evidence_counts(&evidence), sandbox_counts(&sandbox));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_and_stderr_do_not_stop_the_bundle_from_being_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = ppcert_command(dir.path(), &["run", "--out", "b", "--no-progress"], None)
        .spawn()
        .unwrap();
    // A reader that went away (`ppcert run 2>&1 | head -1`): every write now fails.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(0));
    for file in ["evidence.json", "report.html", "MANIFEST.sha256"] {
        assert!(
            dir.path().join("b").join(file).exists(),
            "{file} was not written"
        );
    }
}

//! `ppcert diff`, `run --baseline` and `export --har` against stagings whose behaviour changes
//! between two runs: a quote server of the test's own (a field retyped, a captured field
//! renamed), sandboxes with other layouts (a status) or latency; and two runs of one sandbox
//! with different seeds, which must diff clean.

use std::path::Path;
use std::time::Duration;

use axum::http::StatusCode;
use ppcert::sandbox::{Layout, SandboxOptions};
use serde_json::{Value, json};

use crate::common::*;

/// A staging that answers every POST /quotes with `answer` (a 201), and nothing else: enough
/// for the `smoke` scenario.
async fn quote_server(answer: Value) -> String {
    let route = axum::routing::post(move || {
        let answer = answer.clone();
        async move { (StatusCode::CREATED, axum::Json(answer)) }
    });
    serve(axum::Router::new().route("/quotes", route)).await
}

fn quote(price: Value, delta_key: &str) -> Value {
    json!({"data": {
        "id": "qt_1", "reference": "QR-1", "productTypes": ["WITHDRAWAL"],
        "price": {"amount": price, "currency": "EUR"}, delta_key: 0
    }})
}

/// ppcert.toml: the quote's `price_delta` read from where the first staging put it. Optional
/// on a first quote, so a staging that renames it still passes the run.
const CAPTURE: &str = "[endpoints.quote.capture]\nprice_delta = \"$.data.priceDelta\"\n";

async fn smoke_at(base: &str, dir: &Path, out: &str, extra: &[&str]) -> Finished {
    Run::at(base, "test-token-0123456789")
        .scenario("smoke")
        .config(CAPTURE)
        .out(out)
        .args(&["--backoff-ms", "1"])
        .args(extra)
        .finish_in(dir)
        .await
}

async fn diff_json(dir: &Path, base: &str, new: &str) -> (i32, Value) {
    let done = ppcert(dir, &["diff", base, new, "--json"], None).await;
    let parsed = serde_json::from_str(&done.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", done.stdout, done.stderr));
    (done.code, parsed)
}

fn kinds(findings: &Value) -> Vec<(String, String, String)> {
    (findings.as_array().unwrap().iter())
        .map(|f| {
            let text = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (text("kind"), text("subject"), text("path"))
        })
        .collect()
}

/// Every change but latency (which a loaded machine may shift): what must be empty for two
/// runs of one unchanged staging.
fn behaviour_changes(report: &Value) -> Vec<(String, String, String)> {
    let mut all = kinds(&report["regressions"]);
    all.extend(kinds(&report["changes"]));
    all.retain(|(kind, _, _)| kind != "latency_shift");
    all
}

#[tokio::test]
async fn two_runs_of_an_unchanged_sandbox_with_different_seeds_diff_clean() {
    let dir = tempfile::tempdir().unwrap();
    for (out, seed) in [("one", "1"), ("two", "2")] {
        let run = Run::embedded()
            .out(out)
            .args(&["--seed", seed, "--webhooks"]);
        assert_eq!(run.finish_in(dir.path()).await.code, 0);
    }
    let (code, report) = diff_json(dir.path(), "one", "two").await;
    assert_eq!(code, 0, "{report}");
    assert_eq!(behaviour_changes(&report), vec![], "{report}");
    assert_eq!(report["base"]["verdict"], "passed");
    assert_eq!(report["new"]["bundle"], "two");
    let text = ppcert(dir.path(), &["diff", "one", "two"], None).await;
    assert_eq!(text.code, 0);
    assert!(text.stdout.contains("base: one"), "{}", text.stdout);
}

#[tokio::test]
async fn a_retyped_field_no_capture_reads_is_a_change_not_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let before = quote_server(quote(json!(12.5), "priceDelta")).await;
    let after = quote_server(quote(json!("12.50"), "priceDelta")).await;
    assert_eq!(smoke_at(&before, dir.path(), "before", &[]).await.code, 0);
    assert_eq!(smoke_at(&after, dir.path(), "after", &[]).await.code, 0);
    let (code, report) = diff_json(dir.path(), "before", "after").await;
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        behaviour_changes(&report),
        vec![(
            "field_retyped".into(),
            "quote".into(),
            "$.data.price.amount".into()
        )]
    );
    let change = &report["changes"][0];
    assert_eq!(
        (&change["before"], &change["after"]),
        (&json!("number"), &json!("string"))
    );
}

#[tokio::test]
async fn a_renamed_field_a_capture_reads_fails_run_baseline_naming_field_and_operation() {
    let dir = tempfile::tempdir().unwrap();
    let before = quote_server(quote(json!(12.5), "priceDelta")).await;
    let renamed = quote_server(quote(json!(12.5), "delta")).await;
    assert_eq!(smoke_at(&before, dir.path(), "before", &[]).await.code, 0);
    let run = smoke_at(&renamed, dir.path(), "after", &["--baseline", "before"]).await;
    // The run itself passed (the value is optional on a first quote): the regression is 1.
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("quote: field $.data.priceDelta, which ppcert reads, is missing"),
        "{}",
        run.stdout
    );
    let evidence = read_json(&dir.path().join("after/evidence.json"));
    assert_eq!(evidence["verdict"], "passed");
    let drift = &evidence["baseline"];
    assert_eq!(drift["base"]["bundle"], "before");
    assert_eq!(
        kinds(&drift["regressions"]),
        vec![(
            "read_field_missing".into(),
            "quote".into(),
            "$.data.priceDelta".into()
        )]
    );
    assert_eq!(
        kinds(&drift["changes"]),
        vec![("field_added".into(), "quote".into(), "$.data.delta".into())]
    );
    for (file, needle) in [
        ("report.md", "### Since the baseline"),
        ("report.html", "<h2>Since the baseline</h2>"),
        (
            "junit.xml",
            "baseline › quote $.data.priceDelta › read_field_missing",
        ),
    ] {
        let text = std::fs::read_to_string(dir.path().join("after").join(file)).unwrap();
        assert!(text.contains(needle), "{file} lacks {needle}");
    }
    // The bundle still verifies, and its reports re-render with the section.
    assert_eq!(ppcert(dir.path(), &["verify", "after"], None).await.code, 0);
    std::fs::remove_file(dir.path().join("after/report.md")).unwrap();
    assert_eq!(ppcert(dir.path(), &["report", "after"], None).await.code, 0);
    let md = std::fs::read_to_string(dir.path().join("after/report.md")).unwrap();
    assert!(
        md.contains("regression: quote: field $.data.priceDelta"),
        "{md}"
    );
    // And `ppcert diff` says the same, exit 1.
    let (code, report) = diff_json(dir.path(), "before", "after").await;
    assert_eq!((code, &report["regressions"]), (1, &drift["regressions"]));
}

/// A certification run against `sandbox` into `out`; its exit code.
async fn certify(sandbox: &ppcert::sandbox::Sandbox, dir: &Path, out: &str, extra: &[&str]) -> i32 {
    let run = Run::against(sandbox)
        .out(out)
        .args(&["--backoff-ms", "1"])
        .args(extra)
        .finish_in(dir)
        .await;
    assert!(run.code <= 1, "{}", run.stderr);
    run.code
}

#[tokio::test]
async fn a_changed_success_status_is_a_regression() {
    let dir = tempfile::tempdir().unwrap();
    let spec = sandbox_with(fast_options()).await;
    let other = sandbox_with(SandboxOptions {
        layout: Layout {
            update_status: 200,
            ..Layout::default()
        },
        ..fast_options()
    })
    .await;
    assert_eq!(certify(&spec, dir.path(), "201", &[]).await, 0);
    // The run passes (200 is a success the spec allows for an update) but regressed: 1.
    assert_eq!(
        certify(&other, dir.path(), "200", &["--baseline", "201"]).await,
        1
    );
    let (code, report) = diff_json(dir.path(), "201", "200").await;
    assert_eq!(code, 1);
    assert_eq!(
        behaviour_changes(&report),
        vec![("status_changed".into(), "update".into(), String::new())]
    );
    assert_eq!(report["regressions"][0]["before"], "201");
    assert_eq!(report["regressions"][0]["after"], "200");
}

#[tokio::test]
async fn a_slower_answer_is_a_latency_change() {
    let dir = tempfile::tempdir().unwrap();
    let quick = sandbox().await;
    let slow = sandbox_with(SandboxOptions {
        latency: Duration::from_millis(400),
        ..SandboxOptions::default()
    })
    .await;
    for (sandbox, out) in [(&quick, "quick"), (&slow, "slow")] {
        let run = Run::against(sandbox)
            .scenario("smoke")
            .out(out)
            .finish_in(dir.path())
            .await;
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let (code, report) = diff_json(dir.path(), "quick", "slow").await;
    assert_eq!(code, 0, "{report}");
    let latency: Vec<_> = kinds(&report["changes"])
        .into_iter()
        .filter(|(kind, _, _)| kind == "latency_shift")
        .collect();
    assert!(
        latency.contains(&("latency_shift".into(), "quote".into(), "p95".into())),
        "{report}"
    );
}

#[tokio::test]
async fn diff_refuses_what_is_not_a_verified_bundle_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        Run::embedded()
            .scenario("smoke")
            .out("ok")
            .finish_in(dir.path())
            .await
            .code,
        0
    );
    let missing = ppcert(dir.path(), &["diff", "ok", "nowhere"], None).await;
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("nowhere"), "{}", missing.stderr);
    // A bundle edited after the run does not verify, so it is not compared.
    let evidence = dir.path().join("ok/evidence.json");
    let text = std::fs::read_to_string(&evidence).unwrap();
    std::fs::write(&evidence, text.replace("\"passed\"", "\"failed\"")).unwrap();
    let edited = ppcert(dir.path(), &["diff", "ok", "ok"], None).await;
    assert_eq!(edited.code, 2);
    assert!(
        edited.stderr.contains("does not verify"),
        "{}",
        edited.stderr
    );
    let baseline = Run::embedded()
        .scenario("smoke")
        .args(&["--baseline", "ok"])
        .finish_in(dir.path())
        .await;
    assert_eq!(baseline.code, 2);
    assert!(
        !dir.path().join("b").exists(),
        "nothing is run against a bad baseline"
    );
}

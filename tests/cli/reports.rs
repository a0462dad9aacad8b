//! The evidence bundle's reports: snapshots, escaping, HTML validity, the manifest and verify.

use axum::http::StatusCode;
use axum::response::IntoResponse;
use html5ever::tendril::TendrilSink;

use crate::common::*;

/// Volatile fields (run id, times, ports, server ids, durations) replaced for snapshots.
fn stable(text: &str) -> String {
    let rules = [
        (r"\d{12}-[0-9A-F]{8}", "[RUN]"),
        (
            r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
            "[TIME]",
        ),
        (r"http://127\.0\.0\.1:\d+", "[BASE]"),
        (r"(qt|ct|cl|fc)_[0-9a-f]{14}", "[ID]"),
        (r"QR-[0-9A-F]{14}", "[REF]"),
        (r"fingerprint: `[0-9a-f]{12}`", "fingerprint: `[FP]`"),
        (r"\(\d+\.\d s\)", "([DURATION])"),
        (r#"time="[\d.]+""#, r#"time="[T]""#),
        (
            r"(?m)\| (\d+) \| \d+ \| \d+ \| \d+ \|$",
            "| $1 | [MS] | [MS] | [MS] |",
        ),
    ];
    let mut text = text.to_string();
    for (pattern, replacement) in rules {
        text = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&text, replacement)
            .into_owned();
    }
    text
}

async fn deterministic_run() -> (tempfile::TempDir, std::path::PathBuf) {
    let sandbox = sandbox_with(ppcert::sandbox::SandboxOptions { ..fast_options() }).await;
    let (finished, _, dir) = run_against(
        &sandbox,
        "certification",
        &["--seed", "7", "--concurrency", "1"],
    )
    .await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let bundle = dir.path().join("bundle");
    (dir, bundle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markdown_and_junit_snapshots() {
    let (_dir, bundle) = deterministic_run().await;
    insta::assert_snapshot!(
        "report_md",
        stable(&std::fs::read_to_string(bundle.join("report.md")).unwrap())
    );
    insta::assert_snapshot!(
        "junit_xml",
        stable(&std::fs::read_to_string(bundle.join("junit.xml")).unwrap())
    );
}

/// Parses the file as the HTML5 spec does and fails on any parse error.
fn assert_valid_html5(path: &std::path::Path) -> String {
    let html = std::fs::read_to_string(path).unwrap();
    let opts = html5ever::ParseOpts {
        tree_builder: html5ever::tree_builder::TreeBuilderOpts {
            exact_errors: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let dom = html5ever::parse_document(markup5ever_rcdom::RcDom::default(), opts)
        .from_utf8()
        .read_from(&mut html.as_bytes())
        .unwrap();
    let errors = dom.errors.borrow();
    assert!(errors.is_empty(), "HTML5 parse errors: {errors:?}");
    html
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_is_valid_html5_opening_on_the_verdict_and_the_ledger() {
    let (_dir, bundle) = deterministic_run().await;
    let html = assert_valid_html5(&bundle.join("report.html"));
    assert!(html.starts_with("<!DOCTYPE html>"));
    let verdict = html.find("id=\"verdict\"").unwrap();
    assert!(
        verdict < html.find("id=\"requirements\"").unwrap()
            && verdict < html.find("id=\"exchanges\"").unwrap(),
        "verdict first"
    );
    assert!(html.contains(">PASSED<"));
    assert!(
        !html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained, no script"
    );
    assert!(
        html.contains("not certification evidence"),
        "ppcert's sandbox, even reached by URL, gets the sandbox banner"
    );
    assert!(html.contains("<svg") && html.contains("@media print"));
    // A passing run's printout (its PDF) holds its exchanges, closed on screen, and no heading
    // is left alone at the foot of a page.
    let print = &html[html.find("@media print").unwrap()..html.find("</style>").unwrap()];
    assert!(
        print.contains("details::details-content { content-visibility: visible; display: block; }")
            && !print.contains("display: none"),
        "{print}"
    );
    assert!(print.contains("h1, h2, summary") && print.contains("break-after: avoid"));
    // The timeline draws one bar per exchange listed, green for each that passed.
    let listed = html.matches("<details class=\"exchange\"").count();
    assert!(listed > 0);
    assert_eq!(html.matches("<rect class=\"ok\"").count(), listed);
    assert_eq!(html.matches("<rect class=\"bad\"").count(), 0);
}

async fn hostile(_: axum::http::Request<axum::body::Body>) -> impl IntoResponse {
    let body = r#"{"data": {"id": "<script>alert(1)</script>", "reference": "</pre><img src=x onerror=alert(2)>"}}"#;
    (
        StatusCode::CREATED,
        [("content-type", "application/json")],
        body,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_from_a_server_is_shown_as_text() {
    let base = serve(axum::Router::new().fallback(hostile)).await;
    let (finished, dir) = run_smoke(&base, "hostile-test-token", &[]).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let html = std::fs::read_to_string(dir.path().join("b/report.html")).unwrap();
    assert!(!html.contains("<script>alert(1)") && !html.contains("<img src=x"));
    assert!(
        html.contains("&lt;script&gt;alert(1)"),
        "the markup is shown, escaped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_changed_byte_is_caught_by_verify_and_sha256sum() {
    let (_dir, bundle) = deterministic_run().await;
    let dir = bundle.to_str().unwrap();
    assert_eq!(ppcert(&bundle, &["verify", dir], None).await.code, 0);
    let sha = std::process::Command::new("sha256sum")
        .arg("-c")
        .arg("MANIFEST.sha256")
        .current_dir(&bundle)
        .output()
        .unwrap();
    assert!(sha.status.success(), "sha256sum -c accepts the manifest");
    let path = bundle.join("report.md");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[10] ^= 0x01;
    std::fs::write(&path, bytes).unwrap();
    let finished = ppcert(&bundle, &["verify", dir], None).await;
    assert_eq!(finished.code, 1);
    assert!(
        finished.stderr.contains("report.md: changed"),
        "{}",
        finished.stderr
    );
    std::fs::write(bundle.join("extra.txt"), "x").unwrap();
    assert!(
        ppcert(&bundle, &["verify", dir], None)
            .await
            .stderr
            .contains("extra.txt: not in the manifest")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_re_renders_identically_but_refuses_a_changed_record() {
    let (_dir, bundle) = deterministic_run().await;
    let dir = bundle.to_str().unwrap();
    let before = std::fs::read(bundle.join("report.html")).unwrap();
    std::fs::remove_file(bundle.join("junit.xml")).unwrap();
    let finished = ppcert(&bundle, &["report", dir, "--format", "html,junit"], None).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    assert_eq!(
        std::fs::read(bundle.join("report.html")).unwrap(),
        before,
        "rendering is a function of evidence.json"
    );
    assert_eq!(ppcert(&bundle, &["verify", dir], None).await.code, 0);
    let evidence = bundle.join("evidence.json");
    let text =
        std::fs::read_to_string(&evidence)
            .unwrap()
            .replacen("\"failed\": 0", "\"failed\": 9", 1);
    std::fs::write(&evidence, text).unwrap();
    let refused = ppcert(&bundle, &["report", dir], None).await;
    assert_eq!(refused.code, 1);
    assert!(
        refused.stderr.contains("evidence.json: changed"),
        "{}",
        refused.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_markdown_report_is_appended_to_the_github_step_summary() {
    let sandbox = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "previous step\n").unwrap();
    let base = sandbox.base_url();
    let mut command = ppcert_command(
        dir.path(),
        &run_args(&base, "b", &["--scenario", "smoke"]),
        Some(sandbox.token()),
    );
    command.env("GITHUB_STEP_SUMMARY", &summary);
    let output = command.output().await.unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("previous step\n## ppcert certification evidence — PASSED"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junit_failures_carry_the_message_and_an_excerpt_of_the_answer() {
    let sandbox = sandbox().await;
    let dir = dir_with_config(
        "[endpoints.flight_cancellation]\npath = \"/flight-cancellation-reports\"\n",
    );
    let base = sandbox.base_url();
    let args = run_args(
        &base,
        "b",
        &["--seed", "7", "--concurrency", "1", "--no-progress"],
    );
    let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(finished.code, 1);
    let junit = std::fs::read_to_string(dir.path().join("b/junit.xml")).unwrap();
    let start = junit
        .find("<testsuite name=\"flight-cancellation#1\"")
        .unwrap();
    let end = start + junit[start..].find("</testsuite>").unwrap();
    insta::assert_snapshot!("junit_xml_failure", stable(&junit[start..end]));
    let html = assert_valid_html5(&dir.path().join("b/report.html"));
    assert!(
        html.contains(">FAILED<") && html.contains("href=\"#ex-"),
        "failures link to their exchange"
    );
}

/// What a JUnit consumer (a CI's test tab) reads: suite counts that match the testcases, a
/// failed testcase per unmet requirement, and testcase names unique across flow repeats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junit_gates_like_the_exit_code_for_a_consumer() {
    let sandbox = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    // Every claim is refused: the claim requirement is not met.
    std::fs::write(
        dir.path().join("ppcert.toml"),
        "[endpoints.claim]\npath = \"/contracts/unknown/claims\"\n",
    )
    .unwrap();
    let base = sandbox.base_url();
    let args = run_args(&base, "b", &["--backoff-ms", "1"]);
    let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(finished.code, 1);
    let xml = std::fs::read_to_string(dir.path().join("b/junit.xml")).unwrap();
    let document = roxmltree::Document::parse(&xml).expect("junit.xml is well-formed XML");
    let mut names = std::collections::HashSet::new();
    let mut failed_requirements = Vec::new();
    for suite in document
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
    {
        let cases: Vec<_> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        let failures = cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
            .count();
        assert_eq!(
            suite.attribute("tests"),
            Some(cases.len().to_string().as_str())
        );
        assert_eq!(
            suite.attribute("failures"),
            Some(failures.to_string().as_str())
        );
        for case in cases {
            let name = case.attribute("name").unwrap().to_string();
            assert!(
                names.insert(name.clone()),
                "testcase name {name} is repeated"
            );
            if suite.attribute("name") == Some("requirements")
                && case.children().any(|n| n.has_tag_name("failure"))
            {
                failed_requirements.push(name);
            }
        }
    }
    assert_eq!(failed_requirements, ["requirement › claim"]);
    assert!(names.contains("lifecycle#3 › 5 claim"), "{names:?}");
}

/// A staging refusing every quote at length, as gateways do: `{"error": {...}}` and a long
/// message.
async fn refusing(_: axum::http::Request<axum::body::Body>) -> impl IntoResponse {
    let message = format!(
        "data.client.email: missing field; {}",
        "the request was checked against schema v7. ".repeat(12)
    );
    let body = serde_json::json!({"error": {"code": "INVALID_FIELD", "field": "data.client.email", "message": message}});
    (
        StatusCode::BAD_REQUEST,
        [("content-type", "application/json")],
        body.to_string(),
    )
}

/// The "why" cells of a Failures table, in report.md.
fn why_cells(md: &str) -> Vec<String> {
    let table = &md[md.find("### Failures").unwrap()..md.find("### Bookings").unwrap()];
    table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| #"))
        .map(|l| {
            l.trim_end_matches(" |")
                .rsplit(" | ")
                .next()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_tables_quote_the_server_cut_to_a_readable_length() {
    // The sandbox's own words for a claim on an unknown contract, in both tables.
    let sandbox = sandbox().await;
    let dir = dir_with_config("[endpoints.claim]\npath = \"/contracts/unknown/claims\"\n");
    let base = sandbox.base_url();
    let finished = ppcert(
        dir.path(),
        &run_args(&base, "b", &["--scale", "11", "--concurrency", "8"]),
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    // Markdown shows a backtick as a quote: it must not open a code span in the job summary.
    let words = "HTTP 404: NOT_FOUND: no contract with id 'unknown'";
    let md = std::fs::read_to_string(dir.path().join("b/report.md")).unwrap();
    let cells = why_cells(&md);
    assert!(
        cells.len() == 50 && cells.iter().all(|w| w == words),
        "{md}"
    );
    let html = assert_valid_html5(&dir.path().join("b/report.html"));
    let table = &html[html.find("id=\"failures\"").unwrap()..html.find("id=\"bookings\"").unwrap()];
    let row = "<td>HTTP 404: NOT_FOUND: no contract with id `unknown`</td>";
    // 55 claims refused: report.md lists 50 and sends the reader to report.html for the 5
    // more it really lists.
    assert_eq!(table.matches(row).count(), 55, "{table}");
    assert!(md.contains("_5 more in report.html._"), "{md}");
    // A long refusal is cut to one readable line, in the job summary too.
    let base = serve(axum::Router::new().fallback(refusing)).await;
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let output = ppcert_command(
        dir.path(),
        &run_args(&base, "b", &["--scenario", "smoke"]),
        Some("a-staging-token-123"),
    )
    .env("GITHUB_STEP_SUMMARY", &summary)
    .output()
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let summary = std::fs::read_to_string(&summary).unwrap();
    let cells = why_cells(&summary);
    assert_eq!(cells.len(), 1, "{summary}");
    assert!(
        cells[0].starts_with("HTTP 400: ")
            && cells[0].contains("data.client.email")
            && cells[0].contains("missing field"),
        "{}",
        cells[0]
    );
    assert!(
        cells[0].ends_with('…') && cells[0].chars().count() <= 200,
        "{}",
        cells[0]
    );
}

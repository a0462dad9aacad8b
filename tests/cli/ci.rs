//! Honest in CI: a gate that cannot pass by accident. check-token creates nothing and knows a
//! wrong URL from a valid token; a run that met ppcert's sandbox says so whatever its URL; the
//! environment can be set by flag.

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_against_a_sandbox_started_by_hand_is_marked_sandbox() {
    let sandbox = sandbox().await;
    let (finished, dir) = run_smoke(&sandbox.base_url(), sandbox.token(), &[]).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["run"]["target"]["embedded"], false);
    assert_eq!(evidence["run"]["target"]["sandbox"], true);
    assert!(
        evidence["run"]["notice"]
            .as_str()
            .unwrap()
            .contains("not certification evidence")
    );
    assert!(
        finished.stdout.contains("not certification evidence"),
        "{}",
        finished.stdout
    );
}

#[tokio::test]
async fn the_environment_flag_arms_the_production_guard() {
    let dir = tempfile::tempdir().unwrap();
    let refused = ppcert(
        dir.path(),
        &[
            "run",
            "--base-url",
            "https://127.0.0.1:9",
            "--environment",
            "production",
        ],
        Some("a-production-token"),
    )
    .await;
    assert_eq!(refused.code, 5, "{}", refused.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_token_costs_at_most_the_documented_requests() {
    let bound = 1 + ppcert::engine::EARLY_FLOWS as u64;
    let sandbox = sandbox().await;
    let (finished, dir) = run_smoke(&sandbox.base_url(), "not-the-token", &[]).await;
    assert_eq!(finished.code, 3, "{}", finished.stderr);
    assert_eq!(
        sandbox.requests_received(),
        1,
        "smoke has one flow: the gate is alone"
    );
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["exchanges"].as_array().unwrap().len(), 1);
    for concurrency in ["4", "16", "64"] {
        let fresh = crate::common::sandbox().await;
        let dir = tempfile::tempdir().unwrap();
        let base = fresh.base_url();
        let args = run_args(&base, "b", &["--concurrency", concurrency]);
        let certification = ppcert(dir.path(), &args, Some("not-the-token")).await;
        assert_eq!(certification.code, 3);
        let received = fresh.requests_received();
        assert!(
            (1..=bound).contains(&received),
            "--concurrency {concurrency}: the server got {received} requests (bound {bound})"
        );
        let evidence = read_json(&dir.path().join("b/evidence.json"));
        assert_eq!(
            evidence["exchanges"].as_array().unwrap().len() as u64,
            received
        );
        assert!(
            !certification.stdout.contains("TokenRejected"),
            "human words, not enum names: {}",
            certification.stdout
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_tells_the_truth_about_a_failing_run() {
    let sandbox = sandbox().await;
    let dir = dir_with_config("[endpoints.claim]\npath = \"/contracts/unknown/claims\"\n");
    let base = sandbox.base_url();
    let finished = ppcert_command(
        dir.path(),
        &run_args(&base, "b", &["-v"]),
        Some(sandbox.token()),
    )
    .env("CI", "true")
    .output()
    .await
    .unwrap();
    assert_eq!(finished.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&finished.stderr);
    let stdout = String::from_utf8_lossy(&finished.stdout);
    assert!(
        stderr.contains("lifecycle#1 FAILED") && stderr.contains("/unknown/claims"),
        "each failure is shown as it happens: {stderr}"
    );
    assert!(
        stderr.contains("POST ") && stderr.contains(" ms)"),
        "-v lists exchanges: {stderr}"
    );
    assert!(
        stderr.contains("lifecycle#1 › claim: POST "),
        "-v names each exchange's flow and step: {stderr}"
    );
    let last = stdout.lines().last().unwrap();
    assert!(
        last.ends_with("s")
            && last.contains("exchanges, 23/28 required operations, verdict FAILED"),
        "{last}"
    );
    let json = ppcert(
        dir.path(),
        &run_args(&base, "j", &["--json"]),
        Some(sandbox.token()),
    )
    .await;
    let summary: serde_json::Value = serde_json::from_str(json.stdout.trim()).unwrap();
    assert_eq!(summary["verdict"], "failed");
    assert_eq!(summary["exit_code"], 1);
    assert_eq!(
        summary["required_operations"],
        serde_json::json!({"met": 23, "of": 28})
    );
}

#[tokio::test]
async fn command_line_conventions() {
    let dir = tempfile::tempdir().unwrap();
    let help = ppcert(dir.path(), &["--help"], None).await;
    assert!(
        help.stdout.contains("Exit codes:") && help.stdout.contains("130"),
        "{}",
        help.stdout
    );
    let bash = ppcert(dir.path(), &["completions", "bash"], None).await;
    assert_eq!(bash.code, 0);
    assert!(bash.stdout.contains("_ppcert") && bash.stdout.contains("--base-url"));
    let man = ppcert(dir.path(), &["man"], None).await;
    assert!(
        !man.stdout.contains("(1)") && man.stdout.contains("\\fBppcert proxy\\fR"),
        "one page, naming no other page that does not exist"
    );
    let check = ppcert(dir.path(), &["check-token", "--help"], None).await;
    assert!(!check.stdout.contains('§'), "{}", check.stdout);
    assert!(
        check.stdout.contains("else 30]"),
        "--timeout shows its default: {}",
        check.stdout
    );
    assert!(
        man.stdout.starts_with(".ie") || man.stdout.contains(".TH ppcert"),
        "{}",
        &man.stdout[..200.min(man.stdout.len())]
    );
    let typo = ppcert(dir.path(), &["run", "--scenario", "certificaton"], None).await;
    assert_eq!(typo.code, 2);
    assert!(
        typo.stderr.contains("did you mean `certification`?"),
        "{}",
        typo.stderr
    );
    let no_scheme = ppcert(
        dir.path(),
        &["run", "--base-url", "staging.example.com/api"],
        Some("a-staging-token"),
    )
    .await;
    assert_eq!(no_scheme.code, 2);
    assert!(
        no_scheme
            .stderr
            .contains("did you mean `https://staging.example.com/api`?"),
        "{}",
        no_scheme.stderr
    );
}

#[tokio::test]
async fn format_chooses_the_reports_and_the_partner_name_comes_from_a_flag_or_env() {
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert_command(
        dir.path(),
        &[
            "run",
            "--scenario",
            "smoke",
            "--out",
            "b",
            "--format",
            "html,json",
        ],
        None,
    )
    .env("PPCERT_PARTNER_NAME", "Example Travel")
    .output()
    .await
    .unwrap();
    assert_eq!(finished.status.code(), Some(0));
    let bundle = dir.path().join("b");
    assert!(bundle.join("report.html").exists() && bundle.join("evidence.json").exists());
    assert!(!bundle.join("report.md").exists() && !bundle.join("junit.xml").exists());
    let evidence = read_json(&bundle.join("evidence.json"));
    assert_eq!(evidence["run"]["partner"]["name"], "Example Travel");
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

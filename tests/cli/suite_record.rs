//! `proxy -- COMMAND` on the record: the bundle names the suite (its secrets redacted) and how
//! it ended, and a suite that failed by itself says so above the ledger and on the console's
//! last line, whatever the verdict of its traffic.

use std::time::Duration;

use crate::common::*;

const SECRET: &str = "partner-secret-value-0042";

async fn proxy_with_suite(dir: &std::path::Path, script: &str) -> Finished {
    let args = ["proxy", "--out", "b", "--", "sh", "-c", script];
    let output = ppcert_command(dir, &args, None)
        .env("PARTNER_API_TOKEN", SECRET)
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), output)
        .await
        .expect("the proxy ends with its command")
        .unwrap();
    finished(output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_that_exits_7_is_recorded_and_the_report_says_so_above_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!("test -n {SECRET} --token=abc; exit 7");
    let done = proxy_with_suite(dir.path(), &script).await;
    assert_eq!(done.code, 7, "{}", done.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let command = &evidence["command"];
    assert_eq!(command["exit_code"], 7, "{command}");
    assert_eq!(command["ended"], "exited");
    assert!(command.get("signal").is_none());
    assert_eq!(
        command["argv"],
        serde_json::json!(["sh", "-c", "test -n <redacted> --token=<redacted>"])
    );
    let whole = std::fs::read_to_string(dir.path().join("b/evidence.json")).unwrap();
    assert!(!whole.contains(SECRET));
    for (report, ledger) in [
        ("report.md", "### Requirement ledger"),
        ("report.html", "<section id=\"requirements\">"),
    ] {
        let text = std::fs::read_to_string(dir.path().join("b").join(report)).unwrap();
        let said = text
            .find("failed by itself (exit 7)")
            .unwrap_or_else(|| panic!("{report} does not say the suite's exit"));
        assert!(
            said < text.find(ledger).unwrap(),
            "{report}: above the ledger"
        );
        assert!(!text.contains(SECRET), "{report}");
    }
    let last = done.stderr.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.contains("exit 7") && last.contains("failed by itself"),
        "{last}"
    );
    assert_eq!(ppcert(dir.path(), &["verify", "b"], None).await.code, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_that_passes_is_recorded_without_a_banner() {
    let dir = tempfile::tempdir().unwrap();
    let done = proxy_with_suite(dir.path(), "exit 0").await;
    assert_eq!(done.code, 1, "nothing met: {}", done.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["command"]["exit_code"], 0);
    let md = std::fs::read_to_string(dir.path().join("b/report.md")).unwrap();
    assert!(!md.contains("failed by itself"), "{md}");
}

/// `--until-met` on the verdict's ledger: claims the staging flagged do not count, so the
/// session never says every requirement is met (the old count called accepted claims met).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn until_met_does_not_call_flagged_claims_met() {
    let sandbox = sandbox_with(fast_options()).await;
    // A claim body without `claimDate`: the staging flags every such claim.
    let dir = dir_with_config("[endpoints.claim]\nbody = '{\"data\": {}}'\n");
    let client = r#""$PPCERT_BIN" run --base-url "$PPCERT_PROXY_URL" --config ppcert.toml --out inner --backoff-ms 1 --no-progress -q"#;
    let base = sandbox.base_url();
    let args = [
        "proxy",
        "--base-url",
        &base,
        "--until-met",
        "--out",
        "b",
        "--",
        "sh",
        "-c",
        client,
    ];
    let output = ppcert_command(dir.path(), &args, Some(sandbox.token()))
        .env("PPCERT_BIN", env!("CARGO_BIN_EXE_ppcert"))
        .output()
        .await
        .unwrap();
    let done = finished(output);
    assert_eq!(done.code, 1, "{}", done.stderr);
    assert!(
        !done.stderr.contains("every requirement is met"),
        "{}",
        done.stderr
    );
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "failed");
    let claims = (evidence["requirements"].as_array().unwrap().iter())
        .find(|r| r["operation"] == "claim")
        .unwrap();
    assert_eq!(claims["succeeded"], 0, "{claims}");
}

/// The proxy ends as `run` does: `--json` prints the summary object alone on stdout, and
/// `--sign-key` signs the bundle, which then verifies with the public key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_signs_and_prints_json_as_run_does() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        ppcert(dir.path(), &["keygen", "--out", "k"], None)
            .await
            .code,
        0
    );
    let args = [
        "proxy",
        "--out",
        "b",
        "--json",
        "--sign-key",
        "k",
        "--",
        "sh",
        "-c",
        "exit 0",
    ];
    let output = ppcert_command(dir.path(), &args, None)
        .output()
        .await
        .unwrap();
    let done = finished(output);
    assert_eq!(done.code, 1, "nothing met: {}", done.stderr);
    let summary: serde_json::Value = serde_json::from_str(&done.stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout is not one JSON object: {}", done.stdout));
    assert_eq!(summary["exit_code"], 1);
    assert_eq!(summary["verdict"], "failed");
    assert!(done.stderr.contains("signed: "), "{}", done.stderr);
    let verified = ppcert(dir.path(), &["verify", "b", "--key", "k.pub"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

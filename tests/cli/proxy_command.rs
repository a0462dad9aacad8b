//! `ppcert proxy -- COMMAND`: a partner's own client, run through the proxy, certifies with one
//! command and one exit code, on a staging whose layout needs `[endpoints.*]`; a failing
//! command fails the job with its own code; one that cannot start is 127 and leaves nothing;
//! `--stop-command-when-met` ends a suite that would run on; Ctrl-C still writes the bundle.
//!
//! The partner's client here is a second `ppcert run`, started through `sh -c` and pointed at
//! `$PPCERT_PROXY_URL`: any client that reads its API root from the environment does the same.

use std::time::Duration;

use ppcert::sandbox::{Layout, SandboxOptions};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use crate::common::*;

/// A staging that needs configuration: the API under a path prefix, an `Idempotency-Key` on
/// subscriptions and claims, 204 updates, 202 claims, contract ids only in `Location`.
fn demanding() -> SandboxOptions {
    SandboxOptions {
        require_idempotency_key: true,
        path_prefix: Some("/partner-api".into()),
        layout: Layout {
            update_status: 204,
            claim_status: 202,
            location_ids: true,
            ..Layout::default()
        },
        ..fast_options()
    }
}

const CONFIG: &str = r#"
[endpoints.subscription.headers]
Idempotency-Key = "{{ idempotency_key }}"

[endpoints.claim.headers]
Idempotency-Key = "{{ idempotency_key }}"

[endpoints.subscription.capture]
contract_id = { header = "Location", pattern = "/contracts/([^/]+)$" }
"#;

/// The partner's suite: ppcert's own client, reading the proxy's root from the environment.
const CLIENT: &str =
    r#""$PPCERT_BIN" run --base-url "$PPCERT_PROXY_URL" --out inner --backoff-ms 1 --no-progress"#;

/// `ppcert proxy ARGS -- sh -c SCRIPT` in `dir`, the partner's token (if any) in its environment.
async fn proxy_running(
    dir: &std::path::Path,
    args: &[&str],
    script: &str,
    token: Option<&str>,
) -> Finished {
    let mut all = vec!["proxy", "--out", "b"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", "sh", "-c", script]);
    let output = ppcert_command(dir, &all, token)
        .env("PPCERT_BIN", env!("CARGO_BIN_EXE_ppcert"))
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), output)
        .await
        .expect("the proxy ends with its command")
        .unwrap();
    finished(output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partners_own_client_certifies_with_one_command_on_a_staging_that_needs_endpoints() {
    let sandbox = sandbox_with(demanding()).await;
    let dir = dir_with_config(CONFIG);
    let upstream = sandbox.base_url();
    assert!(upstream.ends_with("/partner-api"), "{upstream}");
    let finished = proxy_running(
        dir.path(),
        &["--base-url", &upstream, "--until-met"],
        CLIENT,
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished.stdout.contains("verdict PASSED") && finished.stdout.contains("inner"),
        "the client's own output passes through: {}",
        finished.stdout
    );
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "passed", "{}", evidence["warnings"]);
    assert_eq!(
        evidence["run"]["scenario_source"],
        "partner traffic through ppcert proxy"
    );
    assert_eq!(
        evidence_counts(&evidence),
        sandbox_counts(&sandbox),
        "the proxy counted what the staging counted"
    );
    let inner = read_json(&dir.path().join("inner/evidence.json"));
    let seen = inner["run"]["target"]["base_url"].as_str().unwrap();
    assert!(
        seen.starts_with("http://127.0.0.1:") && seen.ends_with("/partner-api"),
        "PPCERT_PROXY_URL is the proxy's root with the prefix: {seen}"
    );
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    // The reports say what does not apply to partner traffic instead of blanks and zeros.
    for report in ["report.md", "report.html"] {
        let text = std::fs::read_to_string(dir.path().join("b").join(report)).unwrap();
        for blank in [
            "concurrency 0",
            "Bookings (0)",
            "SHA-256 ``",
            "fingerprint ``",
            "fingerprint <code></code>",
            "SHA-256 <",
        ] {
            assert!(!text.contains(blank), "{report} shows {blank}");
        }
        assert!(
            text.contains("not applicable: the partner's requests carry their own tokens"),
            "{report}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_command_fails_the_job_with_its_own_code_and_the_bundle_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let finished = proxy_running(dir.path(), &[], "echo suite-says-hi; exit 7", None).await;
    assert_eq!(finished.code, 7, "{}", finished.stderr);
    assert!(
        finished.stdout.contains("suite-says-hi"),
        "{}",
        finished.stdout
    );
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "failed");
    // The exit code is COMMAND's, and the console says so rather than leaving a verdict line
    // to explain a code it did not choose.
    assert!(
        finished.stderr.contains("exit 7:") && finished.stderr.contains("failed by itself"),
        "{}",
        finished.stderr
    );
    // A command that succeeds without meeting the requirements still fails: run's table.
    let dir = tempfile::tempdir().unwrap();
    let finished = proxy_running(dir.path(), &[], "exit 0", None).await;
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    assert!(
        finished
            .stdout
            .contains("not passed: 6 requirements not met (quote 0/5"),
        "{}",
        finished.stdout
    );
    assert!(
        !finished.stderr.contains("failed by itself"),
        "{}",
        finished.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn against_the_sandbox_the_command_gets_its_token_and_passes() {
    let dir = tempfile::tempdir().unwrap();
    let finished = proxy_running(dir.path(), &["--until-met"], CLIENT, None).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["run"]["target"]["embedded"], true);
    let bundle = std::fs::read_dir(dir.path().join("b")).unwrap();
    let token_line = finished.stdout.lines().find(|l| l.starts_with("token:"));
    assert!(
        token_line.is_none(),
        "COMMAND has the token; it is not printed"
    );
    assert!(bundle.count() >= 6);
}

#[tokio::test]
async fn a_command_that_cannot_start_is_127_and_leaves_no_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "proxy",
        "--out",
        "b",
        "--",
        "no-such-partner-suite-xyz",
        "--flag",
    ];
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 127, "{}", finished.stderr);
    assert!(
        finished
            .stderr
            .contains("cannot run `no-such-partner-suite-xyz`"),
        "{}",
        finished.stderr
    );
    assert!(!dir.path().join("b").exists(), "nothing left to clean up");
    let not_executable = dir.path().join("suite.txt");
    std::fs::write(&not_executable, "not a program").unwrap();
    let args = [
        "proxy",
        "--out",
        "b",
        "--",
        not_executable.to_str().unwrap(),
    ];
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 126, "{}", finished.stderr);
    let help = ppcert(dir.path(), &["proxy", "--help"], None).await;
    assert!(
        help.stdout.contains("127") && help.stdout.contains("PPCERT_PROXY_URL"),
        "{}",
        help.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_command_when_met_ends_a_suite_that_would_run_on() {
    let dir = tempfile::tempdir().unwrap();
    // The suite certifies, then would sleep for ten minutes: it is stopped once all is met.
    let script = format!("{CLIENT}; sleep 600");
    let finished = proxy_running(
        dir.path(),
        &["--until-met", "--stop-command-when-met"],
        &script,
        None,
    )
    .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished
            .stderr
            .contains("every requirement is met: stopping COMMAND"),
        "{}",
        finished.stderr
    );
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "passed");
    let refused = ppcert(dir.path(), &["proxy", "--stop-command-when-met"], None).await;
    assert_eq!(
        refused.code, 2,
        "the flag needs a COMMAND: {}",
        refused.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_the_command_and_still_writes_the_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "proxy",
        "--out",
        "b",
        "--",
        "sh",
        "-c",
        "echo ready; exec sleep 600",
    ];
    let mut child = ppcert_command(dir.path(), &args, None)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // COMMAND's first line: the proxy is up and listening for Ctrl-C.
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
        .await
        .expect("COMMAND starts");
    assert_eq!(first.unwrap().as_deref(), Some("ready"));
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    interrupt(&child).await;
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("Ctrl-C ends the session")
        .unwrap();
    assert_eq!(status.code(), Some(130));
    let evidence: Value = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "incomplete");
    assert_eq!(evidence["run"]["complete"], false);
}

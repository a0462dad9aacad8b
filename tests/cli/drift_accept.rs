//! `--baseline` as a CI gate lives with it: a staging change regresses (exit 1), the same run
//! with `--accept-drift` exits 0 and records what it accepted, and the next run compared with
//! that bundle is green; a baseline that did not pass is refused.

use std::path::Path;

use ppcert::sandbox::{Layout, SandboxOptions};
use serde_json::Value;

use crate::common::*;

/// A certification run against `sandbox` into `out`.
async fn certify(
    sandbox: &ppcert::sandbox::Sandbox,
    dir: &Path,
    out: &str,
    extra: &[&str],
) -> Finished {
    Run::against(sandbox)
        .out(out)
        .args(&["--backoff-ms", "1"])
        .args(extra)
        .finish_in(dir)
        .await
}

async fn sandbox_answering_updates_with(status: u16) -> ppcert::sandbox::Sandbox {
    sandbox_with(SandboxOptions {
        layout: Layout {
            update_status: status,
            ..Layout::default()
        },
        ..fast_options()
    })
    .await
}

#[tokio::test]
async fn accepted_drift_exits_0_records_what_was_accepted_and_becomes_the_next_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let before = sandbox_answering_updates_with(201).await;
    let after = sandbox_answering_updates_with(200).await;
    assert_eq!(certify(&before, dir.path(), "green", &[]).await.code, 0);
    let red = certify(&after, dir.path(), "red", &["--baseline", "green"]).await;
    assert_eq!(red.code, 1, "{}", red.stderr);
    let accepted = ["--baseline", "green", "--accept-drift"];
    let run = certify(&after, dir.path(), "accepted", &accepted).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("update: HTTP status 201 before, 200 now"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("accepted (--accept-drift)"),
        "{}",
        run.stdout
    );
    let evidence = read_json(&dir.path().join("accepted/evidence.json"));
    let drift = &evidence["baseline"];
    assert_eq!(drift["accepted"], true, "{drift}");
    assert_eq!(drift["regressions"][0]["kind"], "status_changed");
    assert_eq!(evidence["verdict"], "passed");
    for (file, needle) in [
        ("report.md", "**The regressions were accepted**"),
        ("report.html", "regression (accepted)"),
        ("junit.xml", "<skipped"),
    ] {
        let text = std::fs::read_to_string(dir.path().join("accepted").join(file)).unwrap();
        assert!(text.contains(needle), "{file} lacks {needle}");
    }
    assert_eq!(
        ppcert(dir.path(), &["verify", "accepted"], None).await.code,
        0
    );
    // The accepted bundle is the next baseline: the same staging again is green.
    let next = certify(&after, dir.path(), "next", &["--baseline", "accepted"]).await;
    assert_eq!(next.code, 0, "{}\n{}", next.stdout, next.stderr);
    let evidence = read_json(&dir.path().join("next/evidence.json"));
    assert_eq!(evidence["baseline"]["regressions"], Value::Array(vec![]));
    assert!(evidence["baseline"].get("accepted").is_none());
}

#[tokio::test]
async fn a_baseline_that_did_not_pass_is_refused_with_exit_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = sandbox_with(fast_options()).await;
    // A token the sandbox refuses: the run fails (exit 3) but writes a FAILED bundle.
    let failed = Run::at(&sandbox.base_url(), "wrong-token-0123456789")
        .out("failed")
        .finish_in(dir.path())
        .await;
    assert_ne!(failed.code, 0);
    let verdict = read_json(&dir.path().join("failed/evidence.json"))["verdict"].clone();
    assert_ne!(verdict, "passed");
    let run = certify(&sandbox, dir.path(), "new", &["--baseline", "failed"]).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("--baseline failed: its verdict is"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("only a PASSED bundle can be a baseline"),
        "{}",
        run.stderr
    );
    assert!(
        !dir.path().join("new").exists(),
        "nothing is sent before the refusal"
    );
}

/// `ppcert proxy --out OUT ARGS -- <a ppcert run through the proxy>` against `sandbox`.
async fn proxy_session(
    sandbox: &ppcert::sandbox::Sandbox,
    dir: &Path,
    out: &str,
    args: &[&str],
) -> Finished {
    let client = format!(
        r#""$PPCERT_BIN" run --base-url "$PPCERT_PROXY_URL" --out {out}-client --backoff-ms 1 --no-progress -q"#
    );
    let base = sandbox.base_url();
    let mut all = vec!["proxy", "--base-url", &base, "--out", out];
    all.extend_from_slice(args);
    all.extend(["--", "sh", "-c", &client]);
    let output = ppcert_command(dir, &all, Some(sandbox.token()))
        .env("PPCERT_BIN", env!("CARGO_BIN_EXE_ppcert"))
        .output()
        .await
        .unwrap();
    finished(output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_session_accepts_drift_as_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let before = sandbox_answering_updates_with(201).await;
    let after = sandbox_answering_updates_with(200).await;
    let green = proxy_session(&before, dir.path(), "green", &[]).await;
    assert_eq!(green.code, 0, "{}", green.stderr);
    let red = proxy_session(&after, dir.path(), "red", &["--baseline", "green"]).await;
    assert_eq!(red.code, 1, "{}", red.stderr);
    let accept = ["--baseline", "green", "--accept-drift"];
    let accepted = proxy_session(&after, dir.path(), "accepted", &accept).await;
    assert_eq!(accepted.code, 0, "{}\n{}", accepted.stdout, accepted.stderr);
    let evidence = read_json(&dir.path().join("accepted/evidence.json"));
    assert_eq!(evidence["baseline"]["accepted"], true);
    assert_eq!(evidence["baseline"]["base"]["source"], "proxy");
    let md = std::fs::read_to_string(dir.path().join("accepted/report.md")).unwrap();
    assert!(md.contains("### Since the baseline"), "{md}");
    let next = proxy_session(&after, dir.path(), "next", &["--baseline", "accepted"]).await;
    assert_eq!(next.code, 0, "{}", next.stderr);
}

//! `ctrf.json` as the CTRF reporters read it: every document ppcert writes (a passing run, a
//! failed one, a regressed one and an accepted drift) passes the validator of the format's
//! reference implementation, the npm package `ctrf`, which `.ci/run` installs.

use std::path::{Path, PathBuf};

use ppcert::sandbox::{Layout, SandboxOptions};

use crate::common::*;

/// The directory holding the `ctrf` package (CTRF's reference implementation):
/// `$PPCERT_TEST_NODE_MODULES`, which `.ci/run` installs and sets; a failure without it.
fn reference() -> PathBuf {
    let dir = std::env::var_os("PPCERT_TEST_NODE_MODULES").map(PathBuf::from);
    dir.filter(|d| d.join("node_modules/ctrf").is_dir()).expect(
        "the npm package ctrf is missing; .ci/run installs it (npm install) and sets PPCERT_TEST_NODE_MODULES",
    )
}

/// Validates with the package's own `validate`, against the schema of the document's own
/// `specVersion` (an unknown version is an error there too), and prints what it found wrong.
const VALIDATE: &str = r#"
import fs from "node:fs";
import { validate } from "ctrf";
const report = JSON.parse(fs.readFileSync(process.argv.at(-1), "utf8"));
const result = validate(report, { specVersion: report.specVersion });
if (!result.valid) {
  console.error(JSON.stringify(result.errors, null, 2));
  process.exit(1);
}
console.log("valid");
"#;

/// Asserts that the reference implementation accepts the bundle's `ctrf.json`.
async fn assert_valid(bundle: &Path) {
    let ctrf = bundle.join("ctrf.json");
    assert!(ctrf.exists(), "no {}", ctrf.display());
    let checked = tokio::process::Command::new("node")
        .current_dir(reference())
        .args(["--input-type=module", "-e", VALIDATE, "--"])
        .arg(&ctrf)
        .output()
        .await
        .expect("node runs");
    assert!(
        checked.status.success() && String::from_utf8_lossy(&checked.stdout).trim() == "valid",
        "the CTRF reference implementation rejects {}: {}\n{}",
        ctrf.display(),
        String::from_utf8_lossy(&checked.stderr),
        std::fs::read_to_string(&ctrf).unwrap_or_default()
    );
}

#[tokio::test]
#[ignore = "needs the reference implementations .ci/run installs"]
async fn passing_and_failed_runs_write_ctrf_the_reference_implementation_accepts() {
    let (done, _, dir) = Run::embedded().args(&["--format", "ctrf"]).evidence().await;
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert_valid(&dir.path().join("b")).await;

    let sandbox = sandbox_with(fast_options()).await;
    let run = Run::at(&sandbox.base_url(), "wrong-token-0123456789").args(&["--format", "ctrf"]);
    let (failed, _, dir) = run.evidence().await;
    assert_eq!(failed.code, 3, "{}", failed.stderr);
    let ctrf = read_json(&dir.path().join("b/ctrf.json"));
    assert!(ctrf["results"]["summary"]["failed"].as_u64().unwrap() > 0);
    assert_valid(&dir.path().join("b")).await;
}

/// A certification run against `sandbox` into `out`, writing ctrf.json.
async fn certify(
    sandbox: &ppcert::sandbox::Sandbox,
    dir: &Path,
    out: &str,
    extra: &[&str],
) -> Finished {
    Run::against(sandbox)
        .out(out)
        .args(&["--backoff-ms", "1", "--format", "ctrf"])
        .args(extra)
        .finish_in(dir)
        .await
}

#[tokio::test]
#[ignore = "needs the reference implementations .ci/run installs"]
async fn regressed_and_accepted_runs_write_ctrf_the_reference_implementation_accepts() {
    let sandbox = |status| {
        sandbox_with(SandboxOptions {
            layout: Layout {
                update_status: status,
                ..Layout::default()
            },
            ..fast_options()
        })
    };
    let (before, after) = (sandbox(201).await, sandbox(200).await);
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(certify(&before, dir.path(), "green", &[]).await.code, 0);
    let red = certify(&after, dir.path(), "red", &["--baseline", "green"]).await;
    assert_eq!(red.code, 1, "{}", red.stderr);
    let ctrf = read_json(&dir.path().join("red/ctrf.json"));
    let tests = ctrf["results"]["tests"].as_array().unwrap();
    assert!(
        tests
            .iter()
            .any(|t| t["suite"][0] == "baseline" && t["status"] == "failed"),
        "{ctrf:#}"
    );
    assert_valid(&dir.path().join("red")).await;
    let accepted = certify(
        &after,
        dir.path(),
        "accepted",
        &["--baseline", "green", "--accept-drift"],
    )
    .await;
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    assert_valid(&dir.path().join("accepted")).await;
}

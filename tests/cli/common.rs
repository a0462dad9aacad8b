//! Shared fixtures: the sandbox crate's test fixtures, and runners of the real `ppcert` binary.

use ppcert::sandbox::Sandbox;
use serde_json::Value;

/// The fixtures the sandbox's own tests use too (a sandbox on loopback, `Api`, valid bodies,
/// `serve`, the webhook receiver): defined once, in the sandbox crate behind its `testing`
/// feature, which this package's dev-dependency turns on.
pub use ppcert_sandbox::testing::*;

/// The real `ppcert` binary, run in `cwd` with a clean environment for its own variables.
pub fn ppcert_command(
    cwd: &std::path::Path,
    args: &[&str],
    token: Option<&str>,
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_ppcert"));
    command
        .args(args)
        .current_dir(cwd)
        .env_remove("PPCERT_BASE_URL")
        .env_remove("PPCERT_TOKEN")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("PPCERT_PARTNER_NAME")
        .env_remove("PPCERT_DIALECT")
        .env_remove("PPCERT_WEBHOOK_SECRET")
        .env("NO_COLOR", "1");
    if let Some(token) = token {
        command.env("PPCERT_TOKEN", token);
    }
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    command
}

pub struct Finished {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub async fn ppcert(cwd: &std::path::Path, args: &[&str], token: Option<&str>) -> Finished {
    let output = ppcert_command(cwd, args, token)
        .output()
        .await
        .expect("ppcert runs");
    finished(output)
}

/// What a finished `ppcert` process said and how it ended.
pub fn finished(output: std::process::Output) -> Finished {
    Finished {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

pub fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// Successful, counted exchanges per operation in an evidence file.
pub fn evidence_counts(evidence: &Value) -> std::collections::BTreeMap<String, u64> {
    let mut counts = std::collections::BTreeMap::new();
    for exchange in evidence["exchanges"].as_array().unwrap() {
        if exchange["outcome"] == "passed" && exchange.get("expected_error").is_none() {
            *counts
                .entry(exchange["operation"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    counts
}

/// `run --base-url BASE --out OUT` and then `extra`: every test's `ppcert run` starts so.
pub fn run_args<'a>(base: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "--base-url", base, "--out", out];
    args.extend_from_slice(extra);
    args
}

pub fn every_requirement_met(evidence: &Value) -> bool {
    evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["met"] == true)
}

/// Runs a scenario with the binary against `sandbox`; returns the result and the evidence.
pub async fn run_against(
    sandbox: &Sandbox,
    scenario: &str,
    extra: &[&str],
) -> (Finished, Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bundle");
    let base = sandbox.base_url();
    let mut args = run_args(
        &base,
        out.to_str().unwrap(),
        &["--scenario", scenario, "--backoff-ms", "1"],
    );
    args.extend_from_slice(extra);
    let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    let evidence_path = out.join("evidence.json");
    assert!(
        evidence_path.exists(),
        "no evidence.json; stderr: {}",
        finished.stderr
    );
    let evidence = read_json(&evidence_path);
    (finished, evidence, dir)
}

/// A fresh working directory holding `toml` as its ppcert.toml.
pub fn dir_with_config(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ppcert.toml"), toml).unwrap();
    dir
}

/// `ppcert run --scenario smoke` against `base` in a fresh directory; the bundle goes to `b/`.
pub async fn run_smoke(base: &str, token: &str, extra: &[&str]) -> (Finished, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = run_args(base, "b", &["--scenario", "smoke"]);
    args.extend_from_slice(extra);
    let finished = ppcert(dir.path(), &args, Some(token)).await;
    (finished, dir)
}

/// Starts the certification batch against `sandbox` in `dir` (bundle in `b/`), not waiting for it.
pub fn spawn_run(
    sandbox: &Sandbox,
    dir: &std::path::Path,
    concurrency: &str,
) -> tokio::process::Child {
    let base = sandbox.base_url();
    let args = run_args(&base, "b", &["--concurrency", concurrency]);
    ppcert_command(dir, &args, Some(sandbox.token()))
        .spawn()
        .unwrap()
}

/// The example quote request of the sandbox's served OpenAPI document.
pub fn openapi_example_quote(document: &Value) -> &Value {
    &document["paths"]["/quotes"]["post"]["requestBody"]["content"]["application/json"]["example"]
}

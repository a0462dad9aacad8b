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

/// One `ppcert run` of a test, built step by step: the target, a `ppcert.toml`, environment
/// variables and the arguments in the order given (after `run --base-url BASE --out OUT`).
/// `finish` and `evidence` run it in a fresh directory, `spawn` and `command` in the caller's;
/// the bundle goes to `b/` unless told.
pub struct Run {
    base: Option<String>,
    token: Option<String>,
    out: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    config: Option<String>,
}

impl Run {
    /// A run against `sandbox`, with its token.
    pub fn against(sandbox: &Sandbox) -> Run {
        Run::at(&sandbox.base_url(), sandbox.token())
    }

    /// A run against `base`, sending `token`.
    pub fn at(base: &str, token: &str) -> Run {
        Run {
            base: Some(base.to_string()),
            token: Some(token.to_string()),
            ..Run::embedded()
        }
    }

    /// A run with no target and no token: against ppcert's embedded sandbox.
    pub fn embedded() -> Run {
        Run {
            base: None,
            token: None,
            out: "b".to_string(),
            args: Vec::new(),
            env: Vec::new(),
            config: None,
        }
    }

    pub fn scenario(self, name: &str) -> Run {
        self.args(&["--scenario", name])
    }

    /// The bundle's directory, relative to the run's directory.
    pub fn out(mut self, out: &str) -> Run {
        self.out = out.to_string();
        self
    }

    pub fn args(mut self, args: &[&str]) -> Run {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// An environment variable of the run's process (a failpoint, a secret).
    pub fn env(mut self, name: &str, value: &str) -> Run {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// `toml` as the run's config: written to `ppcert.toml` in the run's directory when the
    /// command is made, and named by `--config`.
    pub fn config(mut self, toml: &str) -> Run {
        self.config = Some(toml.to_string());
        self
    }

    /// The `ppcert` command of this run in `dir` (its config written there), not started.
    pub fn command(&self, dir: &std::path::Path) -> tokio::process::Command {
        let mut args = vec!["run"];
        if let Some(base) = &self.base {
            args.extend(["--base-url", base]);
        }
        args.extend(["--out", &self.out]);
        if let Some(toml) = &self.config {
            std::fs::write(dir.join("ppcert.toml"), toml).unwrap();
            args.extend(["--config", "ppcert.toml"]);
        }
        args.extend(self.args.iter().map(String::as_str));
        let mut command = ppcert_command(dir, &args, self.token.as_deref());
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// Starts the run in `dir`, not waiting for it.
    pub fn spawn(&self, dir: &std::path::Path) -> tokio::process::Child {
        self.command(dir).spawn().unwrap()
    }

    /// Runs to the end in `dir`; how it ended.
    pub async fn finish_in(&self, dir: &std::path::Path) -> Finished {
        finished(self.command(dir).output().await.expect("ppcert runs"))
    }

    /// Runs to the end in a fresh directory; returns how it ended and the directory.
    pub async fn finish(&self) -> (Finished, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        (self.finish_in(dir.path()).await, dir)
    }

    /// Runs to the end in `dir`, which must then hold the bundle's evidence.json.
    pub async fn evidence_in(&self, dir: &std::path::Path) -> (Finished, Value) {
        let finished = self.finish_in(dir).await;
        let path = dir.join(&self.out).join("evidence.json");
        assert!(
            path.exists(),
            "no evidence.json; stderr: {}",
            finished.stderr
        );
        (finished, read_json(&path))
    }

    /// Runs to the end in a fresh directory, which must then hold the bundle's evidence.json.
    pub async fn evidence(&self) -> (Finished, Value, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let (finished, evidence) = self.evidence_in(dir.path()).await;
        (finished, evidence, dir)
    }
}

/// Runs a scenario with the binary against `sandbox`; returns the result and the evidence.
pub async fn run_against(
    sandbox: &Sandbox,
    scenario: &str,
    extra: &[&str],
) -> (Finished, Value, tempfile::TempDir) {
    Run::against(sandbox)
        .out("bundle")
        .scenario(scenario)
        .args(&["--backoff-ms", "1"])
        .args(extra)
        .evidence()
        .await
}

/// A fresh working directory holding `toml` as its ppcert.toml.
pub fn dir_with_config(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ppcert.toml"), toml).unwrap();
    dir
}

/// `ppcert run --scenario smoke` against `base` in a fresh directory; the bundle goes to `b/`.
pub async fn run_smoke(base: &str, token: &str, extra: &[&str]) -> (Finished, tempfile::TempDir) {
    Run::at(base, token)
        .scenario("smoke")
        .args(extra)
        .finish()
        .await
}

/// Starts the certification batch against `sandbox` in `dir` (bundle in `b/`), not waiting for it.
pub fn spawn_run(
    sandbox: &Sandbox,
    dir: &std::path::Path,
    concurrency: &str,
) -> tokio::process::Child {
    Run::against(sandbox)
        .args(&["--concurrency", concurrency])
        .spawn(dir)
}

/// The example quote request of the sandbox's served OpenAPI document.
pub fn openapi_example_quote(document: &Value) -> &Value {
    &document["paths"]["/quotes"]["post"]["requestBody"]["content"]["application/json"]["example"]
}

/// Ctrl-C for a child process: SIGINT, as a terminal sends it.
pub async fn interrupt(child: &tokio::process::Child) {
    let pid = child.id().unwrap().to_string();
    let status = tokio::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .await
        .unwrap();
    assert!(status.success());
}

/// Copies a bundle's files (flat) to `to`, to tamper with the copy.
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Rewrites `name`'s manifest line to the file's current digest, as a forger would.
pub fn rehash(bundle: &std::path::Path, name: &str) {
    let digest = ppcert::digest::file_sha256_hex(&bundle.join(name)).unwrap();
    let path = bundle.join("MANIFEST.sha256");
    let text: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| match l.ends_with(&format!("  {name}")) {
            true => format!("{digest}  {name}\n"),
            false => format!("{l}\n"),
        })
        .collect();
    std::fs::write(path, text).unwrap();
}

/// How many lines a run's journal has so far (0 before it exists).
pub async fn journal_lines(path: &std::path::Path) -> usize {
    tokio::fs::read_to_string(path)
        .await
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// The Python that imports `modules` (a reference implementation another project wrote):
/// `$PPCERT_TEST_PYTHON` (which `.ci/run` sets), else `python3`. Only tests marked
/// `#[ignore = "needs the reference implementations .ci/run installs"]` call it, so a plain
/// `cargo test` lists them as ignored rather than passing them unchecked; run on purpose
/// (`--ignored`, as `.ci/run` does), a missing module fails the test, naming `why`.
pub fn reference_python(modules: &str, why: &str) -> String {
    let python = std::env::var("PPCERT_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let ready = std::process::Command::new(&python)
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        ready,
        "{python} cannot import {modules} ({why}): .ci/run installs it and sets PPCERT_TEST_PYTHON"
    );
    python
}

/// Asserts the ledger's `succeeded` equals what the sandbox itself counted for every
/// requirement, less what it had counted `before` the run (a sandbox shared with a probe).
/// With `lost_quotes`, a run that lost answers may have made quotes it cannot confirm: the
/// sandbox's quote count may then exceed `succeeded` by up to the ledger's `unconfirmed`.
pub fn ledger_equals_since(
    evidence: &Value,
    sandbox: &Sandbox,
    before: &std::collections::BTreeMap<String, u64>,
    lost_quotes: bool,
) {
    let counts = sandbox_counts(sandbox);
    for requirement in evidence["requirements"].as_array().unwrap() {
        let op = requirement["operation"].as_str().unwrap();
        if op == "resilience" {
            continue; // a fault plan's row: the faults handled, nothing the staging counts
        }
        let counted = counts.get(op).copied().unwrap_or(0) - before.get(op).copied().unwrap_or(0);
        let succeeded = requirement["succeeded"].as_u64().unwrap();
        let unconfirmed = requirement["unconfirmed"].as_u64().unwrap_or(0);
        if lost_quotes && op == "quote" {
            assert!(
                (succeeded..=succeeded + unconfirmed).contains(&counted),
                "quote: {succeeded} succeeded + {unconfirmed} unconfirmed, staging counted {counted}"
            );
        } else {
            assert_eq!(
                succeeded, counted,
                "{op}: the ledger must equal the staging's own count"
            );
        }
    }
}

/// [`ledger_equals_since`] a fresh sandbox, by a run that lost no answer.
/// Runs `config` against `sandbox` as every "certified from the docs" test does, and asserts
/// what each of them needs first: exit 0, PASSED, and the ledger equal to the sandbox's counts.
/// The evidence and the bundle's folder come back for the test's own checks.
pub async fn certified(sandbox: &Sandbox, config: &str) -> (Value, tempfile::TempDir) {
    let (finished, evidence, dir) = Run::against(sandbox)
        .config(config)
        .args(&["--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert_eq!(evidence["verdict"], "passed");
    ledger_equals(&evidence, sandbox);
    (evidence, dir)
}

/// `ppcert run --resume b` in `dir` against `sandbox`, as a user resumes an interrupted run.
pub async fn resume_run(sandbox: &Sandbox, dir: &std::path::Path) -> Finished {
    resume_run_at(&sandbox.base_url(), sandbox, dir).await
}

/// [`resume_run`] through `base`, a front on `sandbox` (a hostile server passing calls on).
pub async fn resume_run_at(base: &str, sandbox: &Sandbox, dir: &std::path::Path) -> Finished {
    resume_run_with(base, sandbox.token(), dir, &[]).await
}

/// [`resume_run_at`] with `token` and `extra` arguments after the usual ones.
pub async fn resume_run_with(
    base: &str,
    token: &str,
    dir: &std::path::Path,
    extra: &[&str],
) -> Finished {
    let mut args = vec![
        "run",
        "--resume",
        "b",
        "--base-url",
        base,
        "--backoff-ms",
        "1",
    ];
    args.extend_from_slice(extra);
    ppcert(dir, &args, Some(token)).await
}

/// [`resume_run`], and the evidence it leaves in `b`.
pub async fn resume(sandbox: &Sandbox, dir: &std::path::Path) -> (Finished, Value) {
    let finished = resume_run(sandbox, dir).await;
    (finished, read_json(&dir.join("b/evidence.json")))
}

pub fn ledger_equals(evidence: &Value, sandbox: &Sandbox) {
    ledger_equals_since(evidence, sandbox, &Default::default(), false);
}

/// The fenced TOML block of a docs page that starts with `first_line`, as the page shows it:
/// a test that runs it certifies the documented config itself.
pub fn toml_block(page: &str, first_line: &str) -> String {
    let marker = format!("```toml\n{first_line}\n");
    let start = page.find(&marker).expect("the page has the block") + "```toml\n".len();
    let end = start + page[start..].find("```").unwrap();
    page[start..end].to_string()
}

/// A request sent and its answer read as JSON, for tests whose server is known to answer.
#[allow(async_fn_in_trait)]
pub trait JsonAnswer {
    async fn json_answer(self) -> Value;
}

impl JsonAnswer for reqwest::RequestBuilder {
    async fn json_answer(self) -> Value {
        self.send().await.unwrap().json().await.unwrap()
    }
}

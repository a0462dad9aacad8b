//! Tokens that expire: against a sandbox issuing client-credentials tokens that live a couple
//! of seconds, a run lasting far longer passes with `[auth]` alone and with `--token-command`
//! alone, renewing as it goes; a killed run resumes with a fresh token; a token that keeps
//! being rejected stops the run (exit 3); no secret or issued token appears anywhere.

use std::time::Duration;

use ppcert::sandbox::{Sandbox, SandboxOptions};
use serde_json::Value;

use crate::common::*;

const SECRET_VAR: &str = "PPCERT_TEST_CLIENT_SECRET";

/// Tokens live `ttl` seconds; every answer is slowed so the batch outlasts several of them.
async fn issuing(ttl: u64) -> Sandbox {
    sandbox_with(SandboxOptions {
        token_ttl: Some(Duration::from_secs(ttl)),
        latency: Duration::from_millis(40),
        ..fast_options()
    })
    .await
}

fn auth_config(sandbox: &Sandbox, client_auth: &str) -> String {
    format!(
        "[auth]\ntoken_url = \"{}/oauth/token\"\nclient_id = \"ppcert-sandbox\"\nclient_secret_env = \"{SECRET_VAR}\"\nclient_auth = \"{client_auth}\"\n",
        sandbox.root_url()
    )
}

/// `ppcert ARGS` in `dir` with the client secret in its environment and no PPCERT_TOKEN.
async fn with_secret(dir: &std::path::Path, args: &[&str], secret: &str) -> Finished {
    let output = ppcert_command(dir, args, None)
        .env(SECRET_VAR, secret)
        .output()
        .await
        .unwrap();
    finished(output)
}

/// A token from the sandbox's token endpoint, as a partner's own tooling would fetch it.
async fn issue_token(root: &str, secret: &str) -> String {
    let answer: Value = http_client()
        .post(format!("{root}/oauth/token"))
        .basic_auth("ppcert-sandbox", Some(secret))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=client_credentials")
        .json_answer()
        .await;
    answer["access_token"].as_str().unwrap().to_string()
}

fn fingerprints(evidence: &Value) -> std::collections::BTreeSet<String> {
    evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["token_fingerprint"].as_str().map(str::to_string))
        .collect()
}

/// No file of the bundle and no output holds `secret`.
fn nowhere(secret: &str, finished: &Finished, dir: &std::path::Path) {
    assert!(!finished.stdout.contains(secret) && !finished.stderr.contains(secret));
    for entry in std::fs::read_dir(dir.join("b")).unwrap() {
        let path = entry.unwrap().path();
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        assert!(
            !text.contains(secret),
            "{} holds the secret",
            path.display()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_alone_carry_a_run_through_many_token_lifetimes() {
    for client_auth in ["basic", "post"] {
        let sandbox = issuing(2).await;
        let dir = dir_with_config(&auth_config(&sandbox, client_auth));
        let base = sandbox.base_url();
        let args = run_args(&base, "b", &["--concurrency", "1", "--backoff-ms", "1"]);
        let finished = with_secret(dir.path(), &args, sandbox.token()).await;
        assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
        let evidence = read_json(&dir.path().join("b/evidence.json"));
        ledger_equals(&evidence, &sandbox);
        assert!(
            fingerprints(&evidence).len() >= 2,
            "the token rotated during the run"
        );
        let requests = evidence["token_requests"].as_array().unwrap();
        assert!(requests.len() >= 2, "every token fetch is recorded");
        assert!(requests.iter().all(|r| {
            r["request"]
                .as_str()
                .unwrap()
                .starts_with("POST http://127.0.0.1")
                && r["outcome"] == "ok"
                && r["token_fingerprint"].is_string()
        }));
        let source = evidence["run"]["token_source"].as_str().unwrap();
        assert!(
            source.contains("client credentials of ppcert-sandbox"),
            "{source}"
        );
        nowhere(sandbox.token(), &finished, dir.path());
        let verified = ppcert(dir.path(), &["verify", "b"], None).await;
        assert_eq!(
            verified.code, 0,
            "rotating tokens keep the bundle verifiable: {}",
            verified.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_command_alone_is_run_again_when_its_token_expires() {
    let sandbox = issuing(2).await;
    let dir = tempfile::tempdir().unwrap();
    // The command: whatever token the file holds now; a background task keeps it fresh, as
    // a vault agent would. The command says nothing of expiry, so only a 401 renews it.
    let token_file = dir.path().join("current-token");
    let fetch = {
        let (root, secret, file) = (
            sandbox.root_url(),
            sandbox.token().to_string(),
            token_file.clone(),
        );
        tokio::spawn(async move {
            loop {
                let token = issue_token(&root, &secret).await;
                std::fs::write(&file, token).unwrap();
                tokio::time::sleep(Duration::from_millis(700)).await;
            }
        })
    };
    while !token_file.exists() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let command = format!("cat {}", token_file.display());
    let base = sandbox.base_url();
    let args = run_args(
        &base,
        "b",
        &[
            "--token-command",
            &command,
            "--concurrency",
            "1",
            "--backoff-ms",
            "1",
        ],
    );
    let finished = ppcert(dir.path(), &args, None).await;
    fetch.abort();
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    ledger_equals(&evidence, &sandbox);
    assert!(fingerprints(&evidence).len() >= 2, "renewed after expiry");
    let source = evidence["run"]["token_source"].as_str().unwrap();
    assert!(
        source.starts_with("token command cat (words sha256 "),
        "{source}"
    );
    assert!(
        !source.contains("current-token"),
        "the command's words stay out: {source}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_finishes_with_resume_and_a_fresh_token() {
    let sandbox = issuing(2).await;
    let dir = dir_with_config(&auth_config(&sandbox, "basic"));
    let base = sandbox.base_url();
    let args = run_args(&base, "b", &["--concurrency", "1", "--backoff-ms", "1"]);
    let mut child = ppcert_command(dir.path(), &args, None)
        .env(SECRET_VAR, sandbox.token())
        .spawn()
        .unwrap();
    let journal = dir.path().join("b/journal.jsonl");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count()) < 30 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the run made progress"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().await.unwrap();
    // Longer than a token lives: the resumed run cannot use the killed run's token.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let finished = with_secret(
        dir.path(),
        &["run", "--resume", "b", "--backoff-ms", "1"],
        sandbox.token(),
    )
    .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert!(every_requirement_met(&evidence));
    nowhere(sandbox.token(), &finished, dir.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_keeps_being_rejected_stops_the_run_with_exit_3() {
    let sandbox = issuing(1).await;
    let dir = tempfile::tempdir().unwrap();
    // A command that always prints the same token: once it expires, no renewal helps.
    let token = &issue_token(&sandbox.root_url(), sandbox.token()).await;
    let command = format!("echo {token}");
    let base = sandbox.base_url();
    let args = run_args(
        &base,
        "b",
        &[
            "--token-command",
            &command,
            "--concurrency",
            "2",
            "--backoff-ms",
            "1",
        ],
    );
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 3, "{}\n{}", finished.stdout, finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let exchanges = evidence["exchanges"].as_array().unwrap();
    let first_rejection = exchanges
        .iter()
        .position(|e| e["response"]["status"] == 401)
        .expect("a rejection");
    // Flows already mid-step finish their call; no new flow starts (concurrency 2).
    assert!(
        exchanges.len() - first_rejection <= 4,
        "{} exchanges after the first rejection",
        exchanges.len() - first_rejection
    );
    let output = format!("{}{}", finished.stdout, finished.stderr);
    assert!(
        output.contains("invalid_token"),
        "the server's challenge is shown: {output}"
    );
    nowhere(token, &finished, dir.path());
}

#[tokio::test]
async fn a_failing_token_command_is_named_with_its_stderr_and_nothing_is_sent() {
    let sandbox = issuing(60).await;
    let dir = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    let args = run_args(
        &base,
        "b",
        &[
            "--token-command",
            "sh -c 'echo vault: permission denied >&2; exit 2'",
        ],
    );
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 3, "{}", finished.stderr);
    assert!(
        finished
            .stderr
            .contains("token command `sh` failed (exit 2): vault: permission denied"),
        "{}",
        finished.stderr
    );
    crate::docs_refs::troubleshooting_quotes(&finished.stderr, "no token: token command");
    // Refused requests count too: a request sent without a token would be refused, not counted.
    assert_eq!(sandbox.requests_received(), 0, "nothing was sent");
}

#[tokio::test]
async fn a_plain_client_secret_or_two_sources_are_refused() {
    let dir = dir_with_config(
        "[auth]\ntoken_url = \"https://staging.example/oauth/token\"\nclient_id = \"a\"\nclient_secret = \"plain\"\n",
    );
    let validate = ppcert(dir.path(), &["validate"], None).await;
    assert_eq!(validate.code, 2);
    assert!(
        validate.stderr.contains("client_secret"),
        "{}",
        validate.stderr
    );
    let dir = dir_with_config("[auth]\ncommand = \"echo t\"\n");
    let args = ["check-token", "--base-url", "http://127.0.0.1:9"];
    let both = ppcert(dir.path(), &args, Some("static-token-123")).await;
    assert_eq!(both.code, 2, "{}", both.stderr);
    assert!(both.stderr.contains("keep one source"), "{}", both.stderr);
}

/// A token source that renews does not widen the first call's bound: while the gate is
/// pending no 401 gets a second try, so a wrong token costs at most 1 + EARLY_FLOWS requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewing_source_keeps_the_bad_token_bound() {
    let sandbox = issuing(60).await;
    let dir = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    let args = run_args(
        &base,
        "b",
        &[
            "--token-command",
            "echo tok-this-server-never-issued",
            "--concurrency",
            "16",
        ],
    );
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 3, "{}\n{}", finished.stdout, finished.stderr);
    let bound = 1 + ppcert::engine::EARLY_FLOWS as u64;
    assert!(
        sandbox.requests_received() <= bound,
        "{} requests (bound {bound})",
        sandbox.requests_received()
    );
}

/// A token the issuing sandbox hands out for its client credentials.
async fn issued_token(sandbox: &Sandbox) -> String {
    let answer: Value = ppcert::sandbox::testing::http_client()
        .post(format!("{}/oauth/token", sandbox.root_url()))
        .basic_auth("ppcert-sandbox", Some(sandbox.token()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=client_credentials")
        .json_answer()
        .await;
    answer["access_token"].as_str().unwrap().to_string()
}

/// A killed run resumed from the same token file, rotated meanwhile: the same source, so it
/// goes on, and the evidence notes the other token by both fingerprints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_notes_a_rotated_token_from_the_same_source() {
    let sandbox = issuing(60).await;
    let (first, second) = (issued_token(&sandbox).await, issued_token(&sandbox).await);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), &first).unwrap();
    let base = sandbox.base_url();
    let args = [
        "run",
        "--base-url",
        &base,
        "--out",
        "b",
        "--token-file",
        "token",
    ];
    let child = ppcert_command(dir.path(), &args, None).spawn().unwrap();
    let journal = dir.path().join("b/journal.jsonl");
    while journal_lines(&journal).await < 8 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    interrupt(&child).await;
    child.wait_with_output().await.unwrap();
    std::fs::write(dir.path().join("token"), &second).unwrap();
    let resume = [
        "run",
        "--resume",
        "b",
        "--base-url",
        &base,
        "--token-file",
        "token",
    ];
    let resumed = ppcert(dir.path(), &resume, None).await;
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let fingerprint = |token: &str| ppcert::digest::sha256_hex(token.as_bytes())[..12].to_string();
    let noted = evidence["warnings"].as_array().unwrap().iter().any(|w| {
        let w = w.as_str().unwrap();
        w.contains("resumed with another token")
            && w.contains(&fingerprint(&second))
            && w.contains(&fingerprint(&first))
    });
    assert!(noted, "{}", evidence["warnings"]);
}

//! Token sources a stranger controls: an endpoint answering absurd lifetimes, tokens a header
//! cannot carry, escape sequences, echoed credentials, huge answers and transient 5xx; token
//! commands whose children outlive them. None panics ppcert, leaks a secret or hangs it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use ppcert::sandbox::Sandbox;
use serde_json::{Value, json};

use crate::common::*;

const SECRET_VAR: &str = "PPCERT_TEST_CLIENT_SECRET";
const SECRET: &str = "client-secret-7f3a9c";

/// A token endpoint answering `answer(call number, request headers)`.
async fn endpoint(
    answer: impl Fn(usize, &HeaderMap) -> (StatusCode, HeaderMap, String)
    + Clone
    + Send
    + Sync
    + 'static,
) -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let router = Router::new().route(
        "/token",
        post(move |headers: HeaderMap| {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            async move { answer(n, &headers).into_response() }
        }),
    );
    (format!("{}/token", serve(router).await), calls)
}

fn json_answer(body: Value) -> (StatusCode, HeaderMap, String) {
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
    (StatusCode::OK, headers, body.to_string())
}

/// `ppcert check-token` against `sandbox` with `[auth]` pointing at `token_url`.
async fn check_token(sandbox: &Sandbox, token_url: &str) -> Finished {
    let dir = dir_with_config(&format!(
        "[auth]\ntoken_url = \"{token_url}\"\nclient_id = \"ppcert\"\nclient_secret_env = \"{SECRET_VAR}\"\n"
    ));
    let base = sandbox.base_url();
    let output = ppcert_command(dir.path(), &["check-token", "--base-url", &base], None)
        .env(SECRET_VAR, SECRET)
        .output()
        .await
        .unwrap();
    finished(output)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absurd_lifetimes_never_panic() {
    let sandbox = sandbox().await;
    for lifetime in [
        json!(1e19),
        json!(1e20),
        json!("inf"),
        json!(u64::MAX),
        json!(-5),
        json!("NaN"),
        json!(0.0001),
    ] {
        let token = sandbox.token().to_string();
        let life = lifetime.clone();
        let (url, _) =
            endpoint(move |_, _| json_answer(json!({"access_token": token, "expires_in": life})))
                .await;
        let checked = check_token(&sandbox, &url).await;
        assert_eq!(checked.code, 0, "expires_in {lifetime}: {}", checked.stderr);
    }
}

#[tokio::test]
async fn the_first_fetch_is_retried_after_a_transient_503() {
    let sandbox = sandbox().await;
    let token = sandbox.token().to_string();
    let (url, calls) = endpoint(move |n, _| match n {
        0 => {
            let mut headers = HeaderMap::new();
            headers.insert(header::RETRY_AFTER, "0".parse().unwrap());
            (StatusCode::SERVICE_UNAVAILABLE, headers, String::new())
        }
        _ => json_answer(json!({"access_token": token, "expires_in": 300})),
    })
    .await;
    let checked = check_token(&sandbox, &url).await;
    assert_eq!(checked.code, 0, "{}", checked.stderr);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_token_no_header_can_carry_is_refused_with_exit_3() {
    let sandbox = sandbox().await;
    for (token, why) in [
        ("tok\0en-0123456789", "NUL"),
        ("tok\r\nX-Injected: 1", "line break"),
        ("tök-0123456789", "outside visible ASCII"),
    ] {
        let (url, _) =
            endpoint(move |_, _| json_answer(json!({"access_token": token, "expires_in": 60})))
                .await;
        let checked = check_token(&sandbox, &url).await;
        assert_eq!(checked.code, 3, "{token:?}: {}", checked.stderr);
        assert!(
            checked
                .stderr
                .contains("cannot be sent in an Authorization header")
                && checked.stderr.contains(why),
            "{token:?}: {}",
            checked.stderr
        );
    }
    assert_eq!(sandbox.requests_received(), 0, "nothing was sent");
}

/// `PPCERT_TOKEN` is held to the same rule: it was once sent without its header (non-ASCII)
/// or with a space in it, and the staging's 401 blamed the token.
#[tokio::test]
async fn a_ppcert_token_no_header_can_carry_is_refused_with_exit_3() {
    let sandbox = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    for (token, why) in [
        ("tok en-0123456789", "space"),
        ("tök-0123456789", "outside visible ASCII"),
    ] {
        let output = ppcert_command(
            dir.path(),
            &["check-token", "--base-url", &base],
            Some(token),
        )
        .output()
        .await
        .unwrap();
        let checked = finished(output);
        assert_eq!(checked.code, 3, "{token:?}: {}", checked.stderr);
        assert!(
            checked.stderr.contains("PPCERT_TOKEN")
                && checked
                    .stderr
                    .contains("cannot be sent in an Authorization header")
                && checked.stderr.contains(why),
            "{token:?}: {}",
            checked.stderr
        );
    }
    assert_eq!(sandbox.requests_received(), 0, "nothing was sent");
}

#[tokio::test]
async fn the_endpoints_words_reach_the_console_escaped_and_without_the_basic_header() {
    let sandbox = sandbox().await;
    let (url, _) = endpoint(|_, headers| {
        let basic = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let said = format!("bad \u{1b}[2J\nverdict PASSED; you sent {basic}");
        let body = json!({"error": "invalid_client", "error_description": said});
        let (_, headers, body) = json_answer(body);
        (StatusCode::UNAUTHORIZED, headers, body)
    })
    .await;
    let checked = check_token(&sandbox, &url).await;
    assert_eq!(checked.code, 3, "{}", checked.stderr);
    assert!(!checked.stderr.contains('\u{1b}'), "{}", checked.stderr);
    assert!(
        checked.stderr.contains("\\u{1b}[2J\\u{a}verdict"),
        "{}",
        checked.stderr
    );
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("ppcert:{SECRET}"));
    assert!(
        checked.stderr.contains("you sent Basic <redacted>"),
        "{}",
        checked.stderr
    );
    assert!(!checked.stderr.contains(&basic) && !checked.stderr.contains(SECRET));
}

#[tokio::test]
async fn a_huge_token_answer_is_refused_at_its_bound() {
    let sandbox = sandbox().await;
    let (url, _) = endpoint(|_, _| {
        let padding = "x".repeat(4 << 20);
        json_answer(json!({"access_token": "t-0123456789", "padding": padding}))
    })
    .await;
    let checked = check_token(&sandbox, &url).await;
    assert_eq!(checked.code, 3, "{}", checked.stderr);
    assert!(
        checked.stderr.contains("more than 64 KiB"),
        "{}",
        checked.stderr
    );
}

/// A token command written as a shell script in `dir`.
fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.display().to_string()
}

async fn with_command(sandbox: &Sandbox, dir: &std::path::Path, command: &str) -> Finished {
    std::fs::write(
        dir.join("ppcert.toml"),
        format!("[auth]\ncommand = \"{command}\"\ntimeout_secs = 2\n"),
    )
    .unwrap();
    let base = sandbox.base_url();
    ppcert(dir, &["check-token", "--base-url", &base], None).await
}

#[cfg(unix)]
#[tokio::test]
async fn a_token_commands_children_end_and_cannot_hold_its_token_back() {
    let sandbox = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let token = sandbox.token();
    // A grandchild keeps stdout open for five minutes; the token is printed and the command
    // ends at once. The token is used, not the timeout's error.
    let holder = script(
        dir.path(),
        "holder.sh",
        &format!(
            "sh -c 'echo $$ > {0}/holder.pid; exec sleep 300' &\necho '{{\"access_token\": \"{token}\", \"expires_in\": 1e20}}'",
            dir.path().display()
        ),
    );
    let checked = with_command(&sandbox, dir.path(), &holder).await;
    assert_eq!(checked.code, 0, "{}", checked.stderr);
    // A command that hangs with a child and a grandchild: all end at its timeout.
    let hanging = script(
        dir.path(),
        "hanging.sh",
        &format!(
            "sh -c 'sleep 300 & echo $! > {0}/grandchild.pid; wait' &\nsleep 300",
            dir.path().display()
        ),
    );
    let checked = with_command(&sandbox, dir.path(), &hanging).await;
    assert_eq!(checked.code, 3, "{}", checked.stderr);
    assert!(
        checked.stderr.contains("no token within 2 s"),
        "{}",
        checked.stderr
    );
    for file in ["holder.pid", "grandchild.pid"] {
        let pid = std::fs::read_to_string(dir.path().join(file)).unwrap();
        // Killed, it may stay a zombie until init reaps it: that is ended too.
        let mut alive = true;
        for _ in 0..50 {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
            alive = stat.is_ok_and(|s| !s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')));
            if !alive {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(!alive, "{file}: {pid} outlived the token command");
    }
}

#[tokio::test]
async fn a_token_commands_stderr_reaches_the_console_escaped() {
    let sandbox = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let failing = script(
        dir.path(),
        "failing.sh",
        "printf 'denied\\033[31m red\\r\\nverdict PASSED' >&2; exit 4",
    );
    let checked = with_command(&sandbox, dir.path(), &failing).await;
    assert_eq!(checked.code, 3, "{}", checked.stderr);
    assert!(!checked.stderr.contains('\u{1b}'), "{}", checked.stderr);
    assert!(
        checked
            .stderr
            .contains("denied\\u{1b}[31m red\\u{d}\\u{a}verdict PASSED"),
        "{}",
        checked.stderr
    );
}

#[tokio::test]
async fn a_token_url_with_credentials_in_it_is_refused_without_quoting_them() {
    let sandbox = sandbox().await;
    for (url, named) in [
        (
            "https://partner:hunter2-pw@idp.example/token",
            "user name or password",
        ),
        (
            "https://idp.example/token?api_key=hunter2-pw",
            "query parameter `api_key`",
        ),
        (
            "http://127.0.0.1:9/token?client_secret=hunter2-pw",
            "`client_secret`",
        ),
    ] {
        let checked = check_token(&sandbox, url).await;
        assert_eq!(checked.code, 2, "{url}: {}", checked.stderr);
        assert!(checked.stderr.contains(named), "{url}: {}", checked.stderr);
        assert!(!checked.stderr.contains("hunter2"), "{}", checked.stderr);
    }
    assert_eq!(sandbox.requests_received(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiny_lifetimes_are_not_fetched_before_nearly_every_call() {
    let sandbox = sandbox().await;
    let token = sandbox.token().to_string();
    let (url, calls) =
        endpoint(move |_, _| json_answer(json!({"access_token": token, "expires_in": 0.01}))).await;
    let dir = dir_with_config(&format!(
        "[auth]\ntoken_url = \"{url}\"\nclient_id = \"ppcert\"\nclient_secret_env = \"{SECRET_VAR}\"\n"
    ));
    let base = sandbox.base_url();
    let output = ppcert_command(dir.path(), &run_args(&base, "b", &[]), None)
        .env(SECRET_VAR, SECRET)
        .output()
        .await
        .unwrap();
    let ran = finished(output);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let exchanges = evidence["exchanges"].as_array().unwrap().len();
    let fetched = calls.load(Ordering::SeqCst);
    // Renewals before expiry keep 10 s apart: a run of a few seconds needs one or two.
    assert!(
        fetched * 4 < exchanges,
        "{fetched} token fetches for {exchanges} exchanges"
    );
}

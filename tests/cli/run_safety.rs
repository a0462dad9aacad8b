//! Exit codes, the production guard, the token kept out of every output, and the file checks.

use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_token_exits_3_without_starting_the_other_flows() {
    let sandbox = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    let finished = ppcert(
        dir.path(),
        &["run", "--base-url", &base, "--out", "b"],
        Some("not-the-token"),
    )
    .await;
    assert_eq!(finished.code, 3, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("token was rejected"),
        "{}",
        finished.stderr
    );
    crate::docs_refs::troubleshooting_quotes(&finished.stderr, "the token was rejected (401)");
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let exchanges = evidence["exchanges"].as_array().unwrap();
    assert!(
        !exchanges.is_empty() && exchanges.len() <= 4,
        "at most one leading quote per flow slot went out"
    );
    assert!(
        exchanges
            .iter()
            .all(|e| e["operation"] == "quote" && e["response"]["status"] == 401),
        "nothing but quotes before the gate"
    );
    assert!(sandbox.counts().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_target_exits_4() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let finished = ppcert(
        dir.path(),
        &run_args(&base, "b", &["--retries", "1", "--backoff-ms", "1"]),
        Some("t"),
    )
    .await;
    assert_eq!(finished.code, 4, "{}", finished.stderr);
    // One line for the flows that met the closed port, naming the cause and what to check,
    // not the HTTP client's error chain once per flow.
    let refused: Vec<&str> = finished
        .stdout
        .lines()
        .filter(|l| l.contains("Connection refused"))
        .collect();
    assert_eq!(refused.len(), 1, "{}", finished.stdout);
    assert!(
        refused[0].contains("--base-url") && !refused[0].contains("client error (Connect)"),
        "{}",
        refused[0]
    );
    assert!(
        finished.stdout.contains("13 flows did not complete"),
        "{}",
        finished.stdout
    );
    let check = ppcert(dir.path(), &["check-token", "--base-url", &base], Some("t")).await;
    assert_eq!(check.code, 4, "{}", check.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_production_guard_refuses_writes_but_allows_smoke() {
    let sandbox = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ppcert.toml"),
        format!(
            "[target]\nbase_url = \"{}\"\nenvironment = \"production\"\n",
            sandbox.base_url()
        ),
    )
    .unwrap();
    let refused = ppcert(dir.path(), &["run"], Some(sandbox.token())).await;
    assert_eq!(refused.code, 5, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("production guard"),
        "{}",
        refused.stderr
    );
    assert_eq!(sandbox.requests_received(), 0, "nothing was sent");
    let smoke = ppcert(
        dir.path(),
        &["run", "--scenario", "smoke", "--out", "s"],
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(smoke.code, 0, "{}", smoke.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_exit_2_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], Option<&str>, &str); 5] = [
        (
            &["run", "--base-url", "http://staging.example.com"],
            Some("t"),
            "http:// is accepted only for loopback",
        ),
        (
            &["run", "--base-url", "https://staging.example.com"],
            None,
            "needs a token",
        ),
        (
            &["run", "--scenario", "nope"],
            None,
            "no scenario of that name",
        ),
        (
            &["run", "--token-file", "/nonexistent/token"],
            None,
            "cannot read",
        ),
        (&["run", "--concurrency", "0"], None, "0 is not in 1..=1024"),
    ];
    for (args, token, message) in cases {
        let finished = ppcert(dir.path(), args, token).await;
        assert_eq!(finished.code, 2, "{args:?}: {}", finished.stderr);
        assert!(
            finished.stderr.contains(message),
            "{args:?}: {}",
            finished.stderr
        );
    }
}

fn all_text_under(dir: &std::path::Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text.push_str(&all_text_under(&path));
        } else {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_never_appears_in_any_file_or_output() {
    let token = "tok-SECRET-4242-do-not-leak";
    let sandbox = sandbox_with(ppcert::sandbox::SandboxOptions {
        token: token.into(),
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), format!("{token}\n")).unwrap();
    let base = sandbox.base_url();
    let finished = ppcert(
        dir.path(),
        &run_args(&base, "b", &["--token-file", "token"]),
        None,
    )
    .await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let everything = format!(
        "{}{}{}",
        finished.stdout,
        finished.stderr,
        all_text_under(&dir.path().join("b"))
    );
    assert!(!everything.contains(token));
    assert!(everything.contains("Bearer <redacted>"));
}

/// A server that echoes the Authorization header back in a header and a body.
async fn echo(headers: HeaderMap) -> impl IntoResponse {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (
        StatusCode::BAD_REQUEST,
        [("x-echo", auth.clone())],
        format!("{{\"error\": {{\"message\": \"you sent {auth}\"}}}}"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_echoed_by_the_server_is_scrubbed() {
    let base = serve(axum::Router::new().fallback(echo)).await;
    let token = "tok-ECHOED-777";
    let (finished, dir) = run_smoke(&base, token, &[]).await;
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let everything = format!(
        "{}{}{}",
        finished.stdout,
        finished.stderr,
        all_text_under(&dir.path().join("b"))
    );
    assert!(!everything.contains(token), "the echoed token leaked");
    assert!(everything.contains("you sent Bearer <redacted>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_token_says_valid_or_rejected_creates_nothing_and_knows_a_wrong_url() {
    let sandbox = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    let valid = ppcert(
        dir.path(),
        &["check-token", "--base-url", &base],
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(valid.code, 0, "{}", valid.stderr);
    assert!(valid.stdout.contains("is valid"));
    assert!(!valid.stdout.contains(sandbox.token()));
    assert_eq!(
        sandbox_counts(&sandbox).values().sum::<u64>(),
        0,
        "the empty quote created nothing"
    );
    let wrong = format!("{base}/not-the-api");
    let lost = ppcert(
        dir.path(),
        &["check-token", "--base-url", &wrong],
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(
        lost.code, 4,
        "a 404 is a wrong URL, not a valid token: {}",
        lost.stderr
    );
    assert!(
        lost.stderr.contains("not the quotes endpoint"),
        "{}",
        lost.stderr
    );
    let rejected = ppcert(
        dir.path(),
        &["check-token", "--base-url", &base],
        Some("wrong"),
    )
    .await;
    assert_eq!(rejected.code, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scenarios")).unwrap();
    std::fs::write(dir.path().join("scenarios/broken.toml"), "name = \"broken\"\ndescription = \"d\"\n\n[[flows]]\nname = \"f\"\nrepeat = \"five\"\nsteps = [{ action = \"quote\" }]\n").unwrap();
    std::fs::write(
        dir.path().join("ppcert.toml"),
        "[target]\nenvironment = \"prod\"\n",
    )
    .unwrap();
    let finished = ppcert(dir.path(), &["validate"], None).await;
    assert_eq!(finished.code, 2);
    assert!(
        finished
            .stderr
            .contains("scenarios/broken.toml:6: column 10"),
        "{}",
        finished.stderr
    );
    assert!(
        finished.stderr.contains("ppcert.toml:2:") && finished.stderr.contains("prod"),
        "{}",
        finished.stderr
    );
    std::fs::remove_file(dir.path().join("scenarios/broken.toml")).unwrap();
    std::fs::write(dir.path().join("ppcert.toml"), "[target]\nenvironment = \"staging\"\n[endpoints.quote_deletion]\npath = \"/quotes/{{ quote.id }}\"\n").unwrap();
    let finished = ppcert(dir.path(), &["validate"], None).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    assert!(finished.stdout.contains("ppcert.toml: config ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenarios_lists_the_shipped_ones() {
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert(dir.path(), &["scenarios"], None).await;
    assert_eq!(finished.code, 0);
    for name in [
        "certification",
        "smoke",
        "multi-planning",
        "change-for-any-reason",
        "conformance",
    ] {
        assert!(
            finished.stdout.contains(&format!("{name}\n")),
            "{name}: {}",
            finished.stdout
        );
    }
    assert!(
        finished
            .stdout
            .contains("flight_cancellation >= 3 (flight sellers)")
    );
}

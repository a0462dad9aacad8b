//! Small hostile servers in front of the sandbox, doing what real gateways and stagings do
//! wrong: a 502/504 after the write went through, a 200 whose body is an error, a redirect to
//! a login page, the token echoed back in every encoding. The evidence must stay true and the
//! token must appear nowhere.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use ppcert::sandbox::{Sandbox, SandboxOptions};
use serde_json::{Value, json};

use crate::common::*;

/// What the front does with one request, given its method, path and how many of that
/// method-and-path it has seen before.
pub enum Action {
    Forward,
    /// Forward, and pass the answer's headers back too (a replay mark, an `ETag`).
    ForwardWithHeaders,
    /// Forward it (the sandbox does the work), then answer this status instead.
    ForwardThen(u16),
    /// Forward it, then answer this status with the sandbox's body and no other header.
    ForwardAs(u16),
    /// Forward it (the sandbox does the work), then never answer: the client waits until it
    /// gives up or is killed.
    ForwardThenHang,
    /// Answer this without forwarding.
    Answer(u16, Headers, String),
    /// Forward, then rewrite the answer's body and headers.
    Rewrite(Rewriter),
    /// Hold it until the gate has a permit (the test opens it), then as `ForwardWithHeaders`.
    ForwardWhenOpen(Arc<tokio::sync::Semaphore>),
}

/// Extra headers to send back.
pub type Headers = Vec<(&'static str, String)>;
/// Rewrites an answer's body, given the token, and adds headers.
pub type Rewriter = fn(&str, Value) -> (Headers, Value);

pub type Rule = Arc<dyn Fn(&Method, &str, u64) -> Action + Send + Sync>;

struct Front {
    sandbox: String,
    token: String,
    rule: Rule,
    seen: std::sync::Mutex<std::collections::HashMap<(Method, String), u64>>,
    http: reqwest::Client,
}

async fn handle(State(front): State<Arc<Front>>, request: Request) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let shape: String = path
        .split('/')
        .map(|s| {
            if s.chars().any(|c| c.is_ascii_digit()) {
                "*"
            } else {
                s
            }
        })
        .collect::<Vec<_>>()
        .join("/");
    let count = {
        let mut seen = front.seen.lock().unwrap();
        let n = seen.entry((method.clone(), shape.clone())).or_default();
        *n += 1;
        *n - 1
    };
    let headers = request.headers().clone();
    let body = to_bytes(request.into_body(), 1 << 24).await.unwrap();
    let forward = || async {
        let mut outgoing = front
            .http
            .request(method.clone(), format!("{}{path}", front.sandbox))
            .body(body.clone());
        for (name, value) in &headers {
            if name != "host" && name != "content-length" {
                outgoing = outgoing.header(name, value);
            }
        }
        let answer = outgoing.send().await.unwrap();
        let status = answer.status().as_u16();
        let headers = answer.headers().clone();
        (status, headers, answer.bytes().await.unwrap())
    };
    let mut action = (front.rule)(&method, &shape, count);
    if let Action::ForwardWhenOpen(gate) = &action {
        let gate = gate.clone();
        let _passed = gate.acquire().await.unwrap();
        action = Action::ForwardWithHeaders;
    }
    match action {
        Action::Forward => {
            let (status, _, bytes) = forward().await;
            json_answer(status, vec![], bytes.to_vec())
        }
        Action::ForwardWithHeaders => {
            let (status, headers, bytes) = forward().await;
            let mut answer = json_answer(status, vec![], bytes.to_vec());
            for (name, value) in &headers {
                if !matches!(name.as_str(), "content-length" | "transfer-encoding") {
                    answer.headers_mut().insert(name, value.clone());
                }
            }
            answer
        }
        Action::ForwardThen(status) => {
            forward().await;
            json_answer(status, vec![], b"<html>Bad Gateway</html>".to_vec())
        }
        Action::ForwardAs(status) => {
            let (_, _, bytes) = forward().await;
            json_answer(status, vec![], bytes.to_vec())
        }
        Action::ForwardThenHang => {
            forward().await;
            std::future::pending().await
        }
        Action::Answer(status, extra, text) => json_answer(status, extra, text.into_bytes()),
        Action::Rewrite(rewrite) => {
            let (status, _, bytes) = forward().await;
            let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let (extra, value) = rewrite(&front.token, value);
            json_answer(status, extra, value.to_string().into_bytes())
        }
        Action::ForwardWhenOpen(_) => unreachable!("opened above"),
    }
}

fn json_answer(status: u16, extra: Headers, body: Vec<u8>) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    for (name, value) in extra {
        headers.insert(name, HeaderValue::from_str(&value).unwrap());
    }
    (
        StatusCode::from_u16(status).unwrap(),
        headers,
        Body::from(body),
    )
        .into_response()
}

/// Starts a front for `sandbox` with `rule`; returns its base URL.
pub async fn front(sandbox: &Sandbox, rule: Rule) -> String {
    let state = Arc::new(Front {
        sandbox: sandbox.base_url(),
        token: sandbox.token().to_string(),
        rule,
        seen: Default::default(),
        http: http_client(),
    });
    serve(axum::Router::new().fallback(handle).with_state(state)).await
}

fn fast(token: &str) -> SandboxOptions {
    SandboxOptions {
        token: token.to_string(),
        ..fast_options()
    }
}

async fn certify(base: &str, token: &str) -> (Finished, Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let args = run_args(base, "b", &["--backoff-ms", "1", "--concurrency", "2"]);
    let finished = ppcert(dir.path(), &args, Some(token)).await;
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    (finished, evidence, dir)
}

fn succeeded(evidence: &Value, op: &str) -> u64 {
    evidence["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["operation"] == op)
        .map_or(0, |r| r["succeeded"].as_u64().unwrap())
}

/// A gateway's 502/504, a 503 from a server that did the write and then failed answering (no
/// wait announced, so not a refusal), and a 500 or any other 5xx after the write went through
/// may follow a processed write: reconciled, counted once, equal to the staging's own counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5xx_after_a_processed_write_is_reconciled_and_counted_once() {
    for (subscription, claim) in [(502, 504), (503, 503), (500, 500), (500, 507)] {
        let sandbox = sandbox_with(fast("tok-gateway-123")).await;
        let rule: Rule =
            Arc::new(
                move |method, path, count| match (method.as_str(), path, count) {
                    ("POST", "/subscriptions", 0) => Action::ForwardThen(subscription),
                    ("POST", p, 0) if p.ends_with("/claims") => Action::ForwardThen(claim),
                    _ => Action::Forward,
                },
            );
        let base = front(&sandbox, rule).await;
        let (finished, evidence, _dir) = certify(&base, sandbox.token()).await;
        assert_eq!(finished.code, 0, "{subscription}: {}", finished.stdout);
        let counts = sandbox_counts(&sandbox);
        for op in ["subscription", "claim"] {
            assert_eq!(succeeded(&evidence, op), counts[op], "{subscription}: {op}");
        }
        let reconciled = evidence["exchanges"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["reconciled"] == true)
            .count();
        assert_eq!(
            reconciled, 2,
            "{subscription}: the subscription and the claim: {}",
            finished.stdout
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_status_whose_body_is_an_error_is_neither_passed_nor_counted() {
    let sandbox = sandbox_with(fast("tok-errorbody-123")).await;
    let error = r#"{"error": {"code": "NOT_DONE", "message": "nothing was deleted"}}"#;
    let rule: Rule = Arc::new(move |method, path, _| match (method.as_str(), path) {
        ("DELETE", _) | ("POST", "/flight-cancellations") => {
            Action::Answer(200, vec![], error.to_string())
        }
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let (finished, evidence, _dir) = certify(&base, sandbox.token()).await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    assert_eq!(evidence["verdict"], "failed");
    assert_eq!(succeeded(&evidence, "quote_deletion"), 0);
    assert_eq!(succeeded(&evidence, "flight_cancellation"), 0);
    assert!(
        finished
            .stdout
            .contains("the body states an error: NOT_DONE"),
        "{}",
        finished.stdout
    );
}

const TOKEN: &str = "sbx/Tok+en==abc123XYZ";

fn encodings(token: &str) -> Vec<String> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(token);
    vec![
        token.to_string(),
        token.replace('/', "\\/"),
        "sbx%2FTok%2Ben%3D%3Dabc123XYZ".to_string(),
        "sbx%2fTok%2ben%3d%3dabc123XYZ".to_string(),
        "sbx\\u002fTok\\u002ben\\u003d\\u003dabc123XYZ".to_string(),
        b64.clone(),
        b64.trim_end_matches('=').to_string(),
        base64::engine::general_purpose::URL_SAFE.encode(token),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_is_a_failed_step_naming_its_location_and_is_not_followed() {
    let sandbox = sandbox_with(fast(TOKEN)).await;
    let rule: Rule = Arc::new(|method, path, _| match (method.as_str(), path) {
        ("POST", "/subscriptions") => Action::Answer(
            302,
            vec![(
                "location",
                "https://login.example.invalid/?next=sbx%2FTok%2Ben%3D%3Dabc123XYZ".into(),
            )],
            String::new(),
        ),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let (finished, evidence, dir) = certify(&base, TOKEN).await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    assert_eq!(succeeded(&evidence, "subscription"), 0);
    assert!(
        finished.stdout.contains(
            "a redirect to https://login.example.invalid/?next=<redacted> (not followed)"
        ),
        "{}",
        finished.stdout
    );
    assert_no_token(&finished, dir.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoed_token_appears_in_no_file_or_output_in_any_encoding() {
    let sandbox = sandbox_with(fast(TOKEN)).await;
    let rule: Rule = Arc::new(|method, path, _| match (method.as_str(), path) {
        ("POST", "/quotes") => Action::Rewrite(|token, mut body| {
            let forms = encodings(token);
            body["data"][token] = json!(forms[5]);
            body["data"]["escaped"] = json!(format!("Bearer {}", token));
            (vec![("x-echo", forms[2].clone())], body)
        }),
        ("DELETE", _) => Action::Rewrite(|token, _| {
            // A long text whose 64 KiB cut falls inside the JSON-escaped token.
            let escaped = token.replace('/', "\\/");
            let pad = "x".repeat(64 * 1024 - 5);
            (
                vec![],
                json!(format!("{pad}{escaped} {}", encodings(token)[4])),
            )
        }),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let (finished, evidence, dir) = certify(&base, TOKEN).await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
    assert!(evidence.to_string().contains("<redacted>"));
    assert_no_token(&finished, dir.path());
}

fn assert_no_token(finished: &Finished, dir: &std::path::Path) {
    let mut texts = vec![
        ("stdout".to_string(), finished.stdout.clone()),
        ("stderr".to_string(), finished.stderr.clone()),
    ];
    for entry in std::fs::read_dir(dir.join("b")).unwrap() {
        let path = entry.unwrap().path();
        texts.push((
            path.display().to_string(),
            std::fs::read_to_string(&path).unwrap(),
        ));
    }
    for (name, text) in texts {
        for form in encodings(TOKEN) {
            assert!(!text.contains(&form), "{name} holds the token as {form}");
        }
    }
}

/// A 503 that says when to come back declined the write; a 409 to the retry then cannot be
/// the earlier attempt's doing. The staging here never lets a PATCH through: no update may be
/// counted (before, each was "reconciled" and the run PASSED).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_write_followed_by_a_conflict_is_never_counted() {
    let sandbox = sandbox_with(fast("tok-declined-123")).await;
    let rule: Rule = Arc::new(|method, _, count| match (method.as_str(), count % 2) {
        ("PATCH", 0) => Action::Answer(
            503,
            vec![("retry-after", "0".to_string())],
            r#"{"error": {"code": "UNAVAILABLE", "message": "try again"}}"#.into(),
        ),
        ("PATCH", _) => Action::Answer(
            409,
            vec![],
            r#"{"error": {"code": "CONFLICT", "message": "conflict"}}"#.into(),
        ),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let (finished, evidence, _dir) = certify(&base, sandbox.token()).await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    assert_eq!(evidence["verdict"], "failed");
    assert_eq!(
        succeeded(&evidence, "update"),
        0,
        "the staging did no update"
    );
    let reconciled = evidence["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["operation"] == "update" && e["reconciled"] == true);
    assert!(!reconciled, "nothing to reconcile: the write was declined");
}

/// A target that answers 503 to everything does not open the gate: exit 4 after the first
/// call's retries, and no flow beyond the early ones is started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_unavailable_from_the_first_call_is_exit_4_not_a_failed_batch() {
    let sandbox = sandbox_with(ppcert::sandbox::SandboxOptions {
        unavailable_every: Some(1),
        ..fast("tok-unavailable-123")
    })
    .await;
    let (finished, _evidence, _dir) = certify(&sandbox.base_url(), sandbox.token()).await;
    assert_eq!(finished.code, 4, "{}\n{}", finished.stdout, finished.stderr);
    let bound = (1 + ppcert::engine::EARLY_FLOWS as u64) * 4;
    assert!(
        sandbox.requests_received() <= bound,
        "{} requests",
        sandbox.requests_received()
    );
}

/// A staging's words reach the console in failure reasons and warnings; control characters
/// and line separators in them are escaped, so a hostile staging cannot forge a console line
/// ("all passed") or repaint the terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staging_cannot_forge_console_lines_through_its_error_words() {
    let sandbox = sandbox_with(fast("tok-console-123")).await;
    let forged = "\u{1b}[2J\nverdict PASSED\u{2028}all requirements met\r";
    let body = json!({"error": {"code": "BAD", "message": forged}}).to_string();
    let rule: Rule = Arc::new(move |method, path, _| match (method.as_str(), path) {
        ("POST", "/subscriptions") => Action::Answer(400, vec![], body.clone()),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let dir = tempfile::tempdir().unwrap();
    let args = run_args(&base, "b", &["--backoff-ms", "1", "--no-progress", "-v"]);
    let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    let console = format!("{}{}", finished.stdout, finished.stderr);
    assert_eq!(finished.code, 1, "{console}");
    assert!(
        console.contains("\\u{1b}[2J"),
        "the words are shown, escaped: {console}"
    );
    for raw in ['\u{1b}', '\u{2028}', '\r'] {
        assert!(!console.contains(raw), "{raw:?} printed raw: {console}");
    }
    assert!(
        !console
            .lines()
            .any(|line| line.starts_with("verdict PASSED")),
        "{console}"
    );
}

//! A misbehaving server: every fault ends as a clear outcome in the evidence, never a panic,
//! and the body kept is capped.

use std::time::Duration;

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;

use crate::common::*;

async fn html_error_page() -> impl IntoResponse {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        [(header::CONTENT_TYPE, "text/html")],
        "<html><body><h1>500 Internal Server Error</h1></body></html>",
    )
}

async fn truncated_json() -> impl IntoResponse {
    (
        StatusCode::CREATED,
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"data": {"id": "qt_1", "refer"#,
    )
}

async fn ten_megabytes() -> impl IntoResponse {
    let body = format!(
        r#"{{"data": {{"id": "qt_1", "reference": "QR-1", "padding": "{}"}}}}"#,
        "x".repeat(10 * 1024 * 1024)
    );
    (
        StatusCode::CREATED,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
}

async fn never_answers() -> impl IntoResponse {
    tokio::time::sleep(Duration::from_secs(30)).await;
    StatusCode::CREATED
}

async fn wrong_content_type() -> impl IntoResponse {
    (
        StatusCode::CREATED,
        [(header::CONTENT_TYPE, "text/plain")],
        "quote created",
    )
}

/// A server that accepts connections and closes them at once, before any answer.
async fn resetting() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            drop(socket);
        }
    });
    base
}

async fn smoke(base: &str) -> serde_json::Value {
    let extra = ["--retries", "1", "--backoff-ms", "1", "--timeout", "1"];
    let (finished, dir) = run_smoke(base, "fault-test-token", &extra).await;
    assert_eq!(
        finished.code, 1,
        "a fault is a failed requirement, not a crash: {}",
        finished.stderr
    );
    assert!(!finished.stderr.contains("panicked"));
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "failed");
    evidence
}

fn last_exchange(evidence: &serde_json::Value) -> &serde_json::Value {
    evidence["exchanges"].as_array().unwrap().last().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_error_pages_truncated_json_and_wrong_content_types_are_failed_checks() {
    for (name, router) in [
        (
            "html",
            axum::Router::new().route("/quotes", post(html_error_page)),
        ),
        (
            "truncated",
            axum::Router::new().route("/quotes", post(truncated_json)),
        ),
        (
            "text",
            axum::Router::new().route("/quotes", post(wrong_content_type)),
        ),
    ] {
        let evidence = smoke(&serve(router).await).await;
        let exchange = last_exchange(&evidence);
        assert_eq!(exchange["outcome"], "failed", "{name}");
        assert!(
            exchange["response"]["body"].is_string(),
            "{name}: the unreadable body is kept as text"
        );
        let failed: Vec<&str> = exchange["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["passed"] == false)
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert!(
            !failed.is_empty(),
            "{name}: a failed check says what was wrong"
        );
    }
}

/// A valid JSON answer past the 64 KiB the evidence keeps is read whole (the id is found) and
/// kept cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_megabyte_json_answer_is_read_whole_and_capped_in_the_evidence() {
    let base = serve(axum::Router::new().route("/quotes", post(ten_megabytes))).await;
    let (finished, dir) = run_smoke(&base, "fault-test-token", &["--backoff-ms", "1"]).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let exchange = last_exchange(&evidence);
    assert_eq!(exchange["reads"][0]["value"], "qt_1", "read past the cut");
    let response = &exchange["response"];
    assert_eq!(response["body_truncated"], true);
    assert!(response["body"].as_str().unwrap().len() <= ppcert::engine::http::MAX_KEPT_BODY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out_and_a_reset_is_an_error() {
    // On the first call of a run, no answer means the target is unreachable: one request,
    // then exit 4 (a hanging target used to open the gate and end in exit 1).
    for base in [
        serve(axum::Router::new().route("/quotes", post(never_answers))).await,
        resetting().await,
    ] {
        let extra = ["--retries", "1", "--backoff-ms", "1", "--timeout", "1"];
        let (finished, dir) = run_smoke(&base, "fault-test-token", &extra).await;
        assert_eq!(finished.code, 4, "{}", finished.stderr);
        let evidence = read_json(&dir.path().join("b/evidence.json"));
        let exchanges = evidence["exchanges"].as_array().unwrap();
        assert_eq!(exchanges.len(), 1, "the gate is one request, not retried");
        let exchange = &exchanges[0];
        assert_eq!(exchange["outcome"], "error");
        assert!(exchange["response"].is_null() && exchange["error"].is_string());
        assert_eq!(
            exchange["maybe_processed"], true,
            "an unanswered request may have been processed"
        );
    }
}

/// Deletes, duplicates or replaces a few random bytes of `text`.
fn mutate(rng: &mut rand_chacha::ChaCha8Rng, text: &str) -> String {
    use rand::RngExt;
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..rng.random_range(1..4) {
        let at = rng.random_range(0..bytes.len());
        match rng.random_range(0..3) {
            0 => {
                bytes.remove(at);
            }
            1 => bytes.insert(at, bytes[at]),
            _ => {
                let alphabet = b"=[]{}\"'\n#,.x0";
                bytes[at] = alphabet[rng.random_range(0..alphabet.len())];
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn mutated_scenario_and_config_files_never_panic_and_syntax_errors_name_line_and_column() {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
    let config = "[target]\nbase_url = \"https://staging.example.com/api\"\nenvironment = \"staging\"\n[partner]\nname = \"X\"\n[run]\nretries = 2\n[endpoints.quote_deletion]\npath = \"/quotes/{{ quote.id }}\"\n";
    for round in 0..3000 {
        let (_, scenario) = ppcert::scenario::BUILTIN[round % ppcert::scenario::BUILTIN.len()];
        if let Err(e) = ppcert::scenario::parse("s.toml", &mutate(&mut rng, scenario))
            && e.message.starts_with("column")
        {
            assert!(e.line.is_some(), "{e}");
        }
        if let Err(errors) = ppcert::config::parse_file("ppcert.toml", &mutate(&mut rng, config)) {
            for e in errors.iter().filter(|e| e.message.starts_with("column")) {
                assert!(e.line.is_some(), "{e}");
            }
        }
    }
}

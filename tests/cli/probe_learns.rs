//! `ppcert probe` learning from a staging it was not told about: references under another name
//! (`quote_ref`), paths that redirect to their slashed form, refusals that say what they want,
//! quotes answered one entry per bundle; and `--write-config` losing nothing of its input.
//! Each staging is the sandbox behind a small forwarding server of the test's own that changes
//! one thing.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use ppcert::sandbox::Sandbox;
use serde_json::{Value, json};

use crate::common::*;

/// What the forwarding server changes.
#[derive(Clone, Copy, PartialEq)]
enum Twist {
    /// Quote answers `{"result": {"quote_id", "quote_ref", ...}}`.
    QuoteRef,
    /// A path without a trailing slash answers 308 to the slashed one.
    Slashed,
    /// Every call without `X-Api-Version` is refused, in JSON:API's words.
    NeedsVersionHeader,
}

struct Staging {
    upstream: String,
    twist: Twist,
    http: reqwest::Client,
}

async fn forward(State(staging): State<Arc<Staging>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body: Bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let mut path = parts.uri.path().to_string();
    match staging.twist {
        Twist::Slashed if !path.ends_with('/') => {
            let location = format!("{path}/");
            return (StatusCode::PERMANENT_REDIRECT, [("location", location)]).into_response();
        }
        Twist::Slashed => {
            path.pop();
        }
        Twist::NeedsVersionHeader if !parts.headers.contains_key("x-api-version") => {
            let words = json!({"errors": [{"status": "400", "code": "missing_header",
                "detail": "this API needs the header X-Api-Version",
                "source": {"header": "X-Api-Version"}}]});
            return (StatusCode::BAD_REQUEST, axum::Json(words)).into_response();
        }
        _ => {}
    }
    let query = parts
        .uri
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let mut sent = staging
        .http
        .request(
            parts.method.clone(),
            format!("{}{path}{query}", staging.upstream),
        )
        .body(body);
    for name in ["authorization", "content-type", "idempotency-key"] {
        if let Some(value) = parts.headers.get(name) {
            sent = sent.header(name, value);
        }
    }
    let answer = sent.send().await.unwrap();
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
    let headers: HeaderMap = answer.headers().clone();
    let mut body: Value = answer.json().await.unwrap_or(Value::Null);
    if staging.twist == Twist::QuoteRef
        && parts.method == Method::POST
        && path.ends_with("/quotes")
        && status.is_success()
    {
        let quote = body["data"].take();
        body = json!({"result": {"quote_id": quote["id"], "quote_ref": quote["reference"],
            "priceDelta": quote["priceDelta"]}});
    }
    let mut response = (status, axum::Json(body)).into_response();
    if let Some(location) = headers.get("location") {
        response.headers_mut().insert("location", location.clone());
    }
    response
}

/// The sandbox behind a forwarding server that applies `twist`; the server's base URL.
async fn staging(sandbox: &Sandbox, twist: Twist) -> String {
    let staging = Arc::new(Staging {
        upstream: sandbox.base_url(),
        twist,
        http: ppcert::sandbox::testing::http_client(),
    });
    serve(Router::new().fallback(forward).with_state(staging)).await
}

/// `probe --write-config ppcert.toml` over `config` (if any) in a fresh directory, then
/// `run` with the written file alone; the token comes from `[auth] command` when the config
/// says so, else from the environment.
pub(crate) async fn probe_then_run(
    base: &str,
    sandbox: &Sandbox,
    config: Option<&str>,
    extra: &[&str],
) -> (Finished, Finished, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    if let Some(config) = config {
        std::fs::write(dir.path().join("ppcert.toml"), config).unwrap();
    }
    let token = config.is_none().then(|| sandbox.token());
    let mut args = vec![
        "probe",
        "--base-url",
        base,
        "--write-config",
        "ppcert.toml",
        "--force",
    ];
    args.extend(extra);
    let probed = ppcert(dir.path(), &args, token).await;
    let written = std::fs::read_to_string(dir.path().join("ppcert.toml")).unwrap_or_default();
    let ran = ppcert(
        dir.path(),
        &["run", "--out", "b", "--backoff-ms", "1"],
        token,
    )
    .await;
    (probed, ran, written, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_named_quote_ref_are_proposed_proven_and_written_so_run_passes() {
    let sandbox = sandbox_with(fast_options()).await;
    let base = staging(&sandbox, Twist::QuoteRef).await;
    let (probed, ran, written, _dir) = probe_then_run(&base, &sandbox, None, &[]).await;
    assert_eq!(probed.code, 0, "{}{}", probed.stdout, probed.stderr);
    assert!(
        written.contains("reference = \"$.result.quote_ref\""),
        "{written}"
    );
    assert!(written.contains("id = \"$.result.quote_id\""), "{written}");
    assert!(!probed.stdout.contains("Path("), "{}", probed.stdout);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_config_keeps_every_table_and_comment_of_its_input_and_the_run_uses_auth() {
    let sandbox = sandbox_with(fast_options()).await;
    let base = staging(&sandbox, Twist::QuoteRef).await;
    let config = format!(
        "# set up by Ana for the Acme staging\n\
         [auth]\ncommand = \"echo {}\"   # the vault, in real life\n\n\
         [partner]\nname = \"Acme Travel\"\nflight_seller = true\n\n\
         [run]\nretries = 2\n",
        sandbox.token()
    );
    let (probed, ran, written, dir) = probe_then_run(&base, &sandbox, Some(&config), &[]).await;
    assert_eq!(probed.code, 0, "{}{}", probed.stdout, probed.stderr);
    for line in config.lines() {
        assert!(written.contains(line), "lost {line:?}:\n{written}");
    }
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["run"]["partner"]["name"], "Acme Travel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_the_slashed_path_makes_every_path_slashed_and_is_never_an_id() {
    let sandbox = sandbox_with(fast_options()).await;
    let base = staging(&sandbox, Twist::Slashed).await;
    let (probed, ran, written, _dir) = probe_then_run(&base, &sandbox, None, &[]).await;
    assert_eq!(probed.code, 0, "{}{}", probed.stdout, probed.stderr);
    assert!(
        probed
            .stdout
            .contains("answered 308 to the same path with a trailing slash"),
        "{}",
        probed.stdout
    );
    assert!(
        !probed.stdout.contains("/quotes/quotes"),
        "{}",
        probed.stdout
    );
    for path in [
        "path = \"/quotes/\"",
        "path = \"/quotes/{{ quote.id }}/\"",
        "path = \"/subscriptions/\"",
    ] {
        assert!(written.contains(path), "{path} missing:\n{written}");
    }
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_naming_a_missing_header_proposes_the_header_setting() {
    let sandbox = sandbox_with(fast_options()).await;
    let base = staging(&sandbox, Twist::NeedsVersionHeader).await;
    let dir = tempfile::tempdir().unwrap();
    let probed = ppcert(
        dir.path(),
        &["probe", "--base-url", &base],
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(probed.code, 1, "{}{}", probed.stdout, probed.stderr);
    let out = &probed.stdout;
    assert!(out.contains("→ the staging wants the header X-Api-Version on every call: add `[target.headers] X-Api-Version"), "{out}");
    // JSON:API's code and source are in the words, once.
    assert!(
        out.contains("missing_header: this API needs the header X-Api-Version"),
        "{out}"
    );
    assert_eq!(
        out.matches("missing_header: this API needs").count(),
        out.matches("answered HTTP 400").count(),
        "{out}"
    );
    // The deletion needs the quote's id, which was never read: it is said not sent, not
    // drawn as a request without a path that got no answer.
    assert!(out.contains("FAILED delete the quote: not sent"), "{out}");
    assert!(!out.contains(":  → "), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_naming_a_decimal_string_field_proposes_the_body_that_sends_one() {
    let refuse = || async {
        let problem = json!({"type": "about:blank", "title": "Unprocessable", "status": 422,
            "detail": "trips[0].price.amount must be a decimal string",
            "errors": [{"pointer": "/data/trips/0/price/amount", "detail": "must be a decimal string"}]});
        let mut response = (StatusCode::UNPROCESSABLE_ENTITY, axum::Json(problem)).into_response();
        response
            .headers_mut()
            .insert("content-type", "application/problem+json".parse().unwrap());
        response
    };
    let base = serve(Router::new().route("/quotes", axum::routing::post(refuse))).await;
    let dir = tempfile::tempdir().unwrap();
    let probed = ppcert(dir.path(), &["probe", "--base-url", &base], Some("a-token")).await;
    assert_eq!(probed.code, 1, "{}{}", probed.stdout, probed.stderr);
    let out = &probed.stdout;
    assert!(out.contains("wants `/data/trips/0/price/amount` as a decimal string: spell it so in `[endpoints.quote] body`"), "{out}");
    assert!(
        out.contains("request.data.trips[0].price.amount | string"),
        "{out}"
    );
    // The problem's detail is said once, its item by its pointer.
    assert_eq!(
        out.matches("must be a decimal string (").count(),
        out.matches("answered HTTP 422").count(),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_lists_the_bundles_offered_and_proposes_the_setting_never_data_0() {
    let sandbox = sandbox_with(ppcert::sandbox::SandboxOptions {
        dialect: ppcert::sandbox::ApiDialect::ProviderDocs,
        quote_bundles: vec!["Silver".into(), "Gold".into()],
        ..fast_options()
    })
    .await;
    let base = sandbox.base_url();
    let (probed, _ran, written, _dir) = probe_then_run(&base, &sandbox, None, &[]).await;
    assert_eq!(probed.code, 1, "{}{}", probed.stdout, probed.stderr);
    let out = &probed.stdout;
    assert!(
        out.contains("the answer offers one quote per bundle: Silver, Gold"),
        "{out}"
    );
    assert!(out.contains("set `[partner] bundle = \"NAME\"`"), "{out}");
    // The partner's choice comes before the run in the one `next:` line, never a bare
    // `next: ppcert run` that would stop at the bundles.
    assert!(
        out.contains(
            "; next: uncomment `[partner] bundle` for the bundle this partner sells (the quote answer offers Silver, Gold), then ppcert run"
        ),
        "{out}"
    );
    assert!(!out.contains("next: ppcert run"), "{out}");
    assert!(!written.contains("$.data[0]"), "{written}");
    assert!(
        written.contains("# bundle = \"Silver\"   # one of: Silver, Gold"),
        "{written}"
    );

    // With the bundle named, the probe is ready and the run it suggests passes.
    let config = format!(
        "[partner]\nbundle = \"Gold\"\n\n[auth]\ncommand = \"echo {}\"\n",
        sandbox.token()
    );
    let (probed, ran, written, _dir) = probe_then_run(&base, &sandbox, Some(&config), &[]).await;
    assert_eq!(probed.code, 0, "{}{}", probed.stdout, probed.stderr);
    assert!(
        probed.stdout.contains("read bundle Gold from $.data[1]"),
        "{}",
        probed.stdout
    );
    assert!(written.contains("bundle = \"Gold\""), "{written}");
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
}

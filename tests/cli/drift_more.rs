//! `ppcert diff --run BASE NEW --proxy BASE NEW` (who changed: the staging or the partner's
//! client) and `ppcert export --har` (HAR 1.2, checked against its required fields, holding
//! no token).

use std::path::Path;

use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use crate::common::*;

const TOKEN: &str = "drift-test-token-0123456789";

/// A quote server: the price as `price`; a client sending `X-Client-Version: 2` gets one more
/// field (what a partner's new client version brings out of the same staging).
async fn quote_server(price: Value) -> String {
    let route = axum::routing::post(move |headers: HeaderMap| {
        let mut answer = json!({"data": {
            "id": "qt_1", "reference": "QR-1", "productTypes": ["WITHDRAWAL"],
            "price": {"amount": price.clone(), "currency": "EUR"}
        }});
        if headers.get("x-client-version").is_some_and(|v| v == "2") {
            answer["data"]["legacy"] = json!(false);
        }
        async move { (StatusCode::CREATED, axum::Json(answer)) }
    });
    serve(axum::Router::new().route("/quotes", route)).await
}

/// ppcert's own run (the fixed client) of `smoke` against `base`.
async fn run_pair_side(base: &str, dir: &Path, out: &str) {
    let run = Run::at(base, TOKEN)
        .scenario("smoke")
        .out(out)
        .finish_in(dir)
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// A proxy session in front of `upstream`, the partner's client being a `ppcert run` of
/// `smoke` (the new version of the client sends `X-Client-Version: 2`).
async fn proxy_pair_side(upstream: &str, dir: &Path, out: &str, new_client: bool, extra: &[&str]) {
    let config = if new_client {
        std::fs::write(
            dir.join("client.toml"),
            "[endpoints.quote.headers]\nX-Client-Version = \"2\"\n",
        )
        .unwrap();
        "--config client.toml"
    } else {
        ""
    };
    let script = format!(
        r#""$PPCERT_BIN" run --base-url "$PPCERT_PROXY_URL" --scenario smoke --out {out}-client --backoff-ms 1 --no-progress {config}"#
    );
    let mut args = vec!["proxy", "--base-url", upstream, "--out", out];
    args.extend_from_slice(extra);
    args.extend(["--", "sh", "-c", &script]);
    let output = ppcert_command(dir, &args, Some(TOKEN))
        .env("PPCERT_BIN", env!("CARGO_BIN_EXE_ppcert"))
        .output()
        .await
        .unwrap();
    let done = finished(output);
    // One quote does not meet the certification's requirements: 1, with a bundle.
    assert_eq!(done.code, 1, "{}", done.stderr);
    assert!(
        dir.join(out).join("evidence.json").exists(),
        "{}",
        done.stderr
    );
}

async fn attribution(dir: &Path, run: [&str; 2], proxy: [&str; 2]) -> Value {
    let args = [
        "diff", "--run", run[0], run[1], "--proxy", proxy[0], proxy[1], "--json",
    ];
    let done = ppcert(dir, &args, None).await;
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    serde_json::from_str(&done.stdout).unwrap()
}

fn paths(findings: &Value) -> Vec<String> {
    (findings.as_array().unwrap().iter())
        .map(|f| {
            format!(
                "{} {}",
                f["kind"].as_str().unwrap(),
                f["path"].as_str().unwrap_or("")
            )
        })
        .filter(|f| !f.starts_with("latency_shift"))
        .collect()
}

/// The side `found` names is `side`, or `both` when the other side's only findings are
/// latency shifts (a loaded machine's).
fn side_is(found: &Value, side: &str) -> bool {
    let other = if side == "client" {
        "staging"
    } else {
        "client"
    };
    found["changed"] == side || (found["changed"] == "both" && paths(&found[other]).is_empty())
}

#[tokio::test]
async fn a_staging_change_is_seen_by_both_pairs_a_client_change_only_by_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let before = quote_server(json!(12.5)).await;
    let after = quote_server(json!("12.50")).await;
    run_pair_side(&before, dir.path(), "run1").await;
    run_pair_side(&after, dir.path(), "run2").await;
    run_pair_side(&before, dir.path(), "run3").await;
    proxy_pair_side(&before, dir.path(), "proxy1", false, &[]).await;
    proxy_pair_side(&after, dir.path(), "proxy2", false, &[]).await;
    proxy_pair_side(&before, dir.path(), "proxy3", true, &[]).await;
    // One quote is not a PASSED session, so it cannot be `proxy --baseline`: refused, 2.
    let refused = ppcert(
        dir.path(),
        &[
            "proxy",
            "--base-url",
            &after,
            "--baseline",
            "proxy1",
            "--",
            "true",
        ],
        Some(TOKEN),
    )
    .await;
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("--baseline proxy1: its verdict is FAILED")
    );

    // The staging retyped the price: ppcert's own run sees it too.
    let staging = attribution(dir.path(), ["run1", "run2"], ["proxy1", "proxy2"]).await;
    assert!(side_is(&staging, "staging"), "{staging}");
    assert_eq!(
        paths(&staging["staging"]),
        vec!["field_retyped $.data.price.amount"]
    );
    assert_eq!(paths(&staging["client"]), Vec::<String>::new());
    assert_eq!(staging["proxy"]["new"]["source"], "proxy");

    // Same staging, a new client version: only its traffic through the proxy shows it.
    let client = attribution(dir.path(), ["run1", "run3"], ["proxy1", "proxy3"]).await;
    assert_eq!(
        paths(&client["client"]),
        vec!["field_added $.data.legacy"],
        "{client}"
    );
    assert_eq!(paths(&client["staging"]), Vec::<String>::new());
    assert!(side_is(&client, "client"), "{client}");

    let text = ppcert(
        dir.path(),
        &[
            "diff", "--run", "run1", "run2", "--proxy", "proxy1", "proxy2",
        ],
        None,
    )
    .await;
    assert!(
        text.stdout.starts_with("the staging changed"),
        "{}",
        text.stdout
    );
}

/// HAR 1.2's required members (http://www.softwareishard.com/blog/har-12-spec/), each of the
/// JSON type it must have.
fn check_har(har: &Value) {
    let log = &har["log"];
    assert_eq!(log["version"], "1.2");
    assert!(log["creator"]["name"].is_string() && log["creator"]["version"].is_string());
    let entries = log["entries"].as_array().expect("log.entries");
    assert!(!entries.is_empty());
    for entry in entries {
        assert!(entry["startedDateTime"].is_string() && entry["time"].is_number());
        let started = entry["startedDateTime"].as_str().unwrap();
        assert!(
            chrono::DateTime::parse_from_rfc3339(started).is_ok(),
            "{started}"
        );
        assert!(entry["cache"].is_object());
        for timing in ["send", "wait", "receive"] {
            assert!(entry["timings"][timing].is_number(), "timings.{timing}");
        }
        let request = &entry["request"];
        for (member, ok) in [
            ("method", request["method"].is_string()),
            ("url", request["url"].is_string()),
            ("httpVersion", request["httpVersion"].is_string()),
            ("cookies", request["cookies"].is_array()),
            ("headers", request["headers"].is_array()),
            ("queryString", request["queryString"].is_array()),
            ("headersSize", request["headersSize"].is_number()),
            ("bodySize", request["bodySize"].is_number()),
        ] {
            assert!(ok, "request.{member} in {entry}");
        }
        if let Some(post) = request.get("postData") {
            assert!(post["mimeType"].is_string() && post["text"].is_string());
        }
        let response = &entry["response"];
        for (member, ok) in [
            ("status", response["status"].is_number()),
            ("statusText", response["statusText"].is_string()),
            ("httpVersion", response["httpVersion"].is_string()),
            ("cookies", response["cookies"].is_array()),
            ("headers", response["headers"].is_array()),
            ("content.size", response["content"]["size"].is_number()),
            (
                "content.mimeType",
                response["content"]["mimeType"].is_string(),
            ),
            ("redirectURL", response["redirectURL"].is_string()),
            ("headersSize", response["headersSize"].is_number()),
            ("bodySize", response["bodySize"].is_number()),
        ] {
            assert!(ok, "response.{member} in {entry}");
        }
        for header in request["headers"].as_array().unwrap() {
            assert!(header["name"].is_string() && header["value"].is_string());
        }
    }
}

#[tokio::test]
async fn export_har_is_har_1_2_and_holds_no_token() {
    let sandbox = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let run = Run::against(&sandbox)
        .scenario("smoke")
        .finish_in(dir.path())
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let done = ppcert(
        dir.path(),
        &["export", "--har", "b", "--out", "run.har"],
        None,
    )
    .await;
    assert_eq!(done.code, 0, "{}", done.stderr);
    let text = std::fs::read_to_string(dir.path().join("run.har")).unwrap();
    assert!(
        !text.contains(sandbox.token()),
        "the token leaked into the HAR"
    );
    let har: Value = serde_json::from_str(&text).unwrap();
    check_har(&har);
    let entry = &har["log"]["entries"][0];
    assert_eq!(entry["request"]["method"], "POST");
    assert_eq!(entry["response"]["status"], 201);
    let authorization = (entry["request"]["headers"].as_array().unwrap().iter())
        .find(|h| {
            h["name"]
                .as_str()
                .unwrap()
                .eq_ignore_ascii_case("authorization")
        })
        .expect("the request's Authorization header, redacted");
    assert_eq!(authorization["value"], "Bearer <redacted>");
    // Stdout gives the same archive; an existing --out is never overwritten.
    let stdout = ppcert(dir.path(), &["export", "--har", "b"], None).await;
    assert_eq!(serde_json::from_str::<Value>(&stdout.stdout).unwrap(), har);
    let again = ppcert(
        dir.path(),
        &["export", "--har", "b", "--out", "run.har"],
        None,
    )
    .await;
    assert_eq!(again.code, 2);
}

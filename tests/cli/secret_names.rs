//! Secrets by name as well as by source: the value of a header whose name says it carries a
//! credential is scrubbed whatever gave it (a literal in `ppcert.toml`, `--header`,
//! `env.NAME`), and so is the token, in every spelling the scrubber promises
//! (docs/security.md), wherever a staging echoes them: its headers, its body (values and
//! keys), and URLs in either.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use ppcert::sandbox::{Sandbox, SandboxOptions};
use serde_json::{Value, json};

use crate::common::*;

const TOKEN: &str = "sbx/Tok+en==abc123XYZ";
/// A gateway key written as it is in `ppcert.toml` (before, shown in clear when echoed).
const LITERAL: &str = "gw/literal+Key=0123";
/// A session token given with `--header`.
const FLAG: &str = "sess:flag/value+4567";
/// A client secret read by `{{ env.PP_TEST_CLIENT_SECRET }}`.
const FROM_ENV: &str = "env~secret/89+AB=";

/// `secret` with the characters `encode` picks written by `how`.
fn written(secret: &str, encode: impl Fn(char) -> bool, how: impl Fn(u8) -> String) -> String {
    let mut out = String::new();
    for c in secret.chars() {
        if encode(c) {
            let mut utf8 = [0u8; 4];
            c.encode_utf8(&mut utf8)
                .bytes()
                .for_each(|b| out.push_str(&how(b)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Every spelling docs/security.md promises for a secret (the line-wrapped forms of long
/// secrets are the unit tests' to cover).
fn spellings(secret: &str) -> Vec<String> {
    let all = |_: char| true;
    let not_alnum = |c: char| !c.is_ascii_alphanumeric();
    let not_unreserved = |c: char| not_alnum(c) && !"-._~".contains(c);
    let python_quote = |c: char| not_unreserved(c) && c != '/';
    let uri_component = |c: char| not_alnum(c) && !"-_.!~*'()".contains(c);
    let form = |c: char| not_alnum(c) && !"*-._".contains(c);
    let upper = |b: u8| format!("%{b:02X}");
    let lower = |b: u8| format!("%{b:02x}");
    let u_lower = |b: u8| format!("\\u{b:04x}");
    let u_upper = |b: u8| format!("\\u{b:04X}");
    let json = serde_json::to_string(secret).unwrap();
    let json = json[1..json.len() - 1].to_string();
    let b64 = base64::engine::general_purpose::STANDARD.encode(secret);
    let b64_url = base64::engine::general_purpose::URL_SAFE.encode(secret);
    vec![
        secret.to_string(),
        json.replace('/', "\\/"),
        written(secret, all, u_lower),
        written(secret, all, u_upper),
        written(secret, not_alnum, u_lower),
        written(secret, not_alnum, u_upper),
        written(secret, not_unreserved, u_lower),
        written(secret, all, upper),
        written(secret, all, lower),
        written(secret, not_alnum, upper),
        written(secret, not_alnum, lower),
        written(secret, not_unreserved, upper),
        written(secret, not_unreserved, lower),
        written(secret, python_quote, upper),
        written(secret, uri_component, upper),
        written(secret, form, upper),
        written(secret, form, lower),
        b64.clone(),
        b64.trim_end_matches('=').to_string(),
        b64_url.clone(),
        b64_url.trim_end_matches('=').to_string(),
    ]
}

struct Echo {
    sandbox: String,
    http: reqwest::Client,
}

/// Forwards to the sandbox; a quote's answer echoes every spelling of the token and of every
/// credential header the request carried: in headers, in body values and keys, in URLs.
async fn echo(State(echo): State<Arc<Echo>>, request: Request) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let headers = request.headers().clone();
    let body = to_bytes(request.into_body(), 1 << 24).await.unwrap();
    let mut outgoing = (echo.http)
        .request(method.clone(), format!("{}{path}", echo.sandbox))
        .body(body);
    for (name, value) in &headers {
        if name != "host" && name != "content-length" {
            outgoing = outgoing.header(name, value);
        }
    }
    let answer = outgoing.send().await.unwrap();
    let status = answer.status();
    let mut value: Value =
        serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap_or(Value::Null);
    let mut extra = HeaderMap::new();
    if method == "POST" && path == "/quotes" {
        let bearer = headers["authorization"].to_str().unwrap();
        let mut secrets = vec![bearer.trim_start_matches("Bearer ").to_string()];
        for name in ["x-gateway-key", "x-session-token", "x-client-secret"] {
            secrets.push(headers[name].to_str().unwrap().to_string());
        }
        let (mut values, mut keys, mut urls) = (vec![], serde_json::Map::new(), vec![]);
        for (i, secret) in secrets.iter().enumerate() {
            let forms = spellings(secret);
            let header = HeaderValue::from_str(&forms.join(" ")).unwrap();
            extra.insert(
                format!("x-echo-{i}")
                    .parse::<axum::http::HeaderName>()
                    .unwrap(),
                header,
            );
            let link = forms
                .iter()
                .map(|f| format!("<https://gw.invalid/n?k={f}>"))
                .collect::<Vec<_>>();
            let link = HeaderValue::from_str(&link.join(", ")).unwrap();
            extra.insert(
                format!("x-link-{i}")
                    .parse::<axum::http::HeaderName>()
                    .unwrap(),
                link,
            );
            for form in forms {
                urls.push(json!(format!("https://gw.invalid/next?k={form}&a=1")));
                keys.insert(form.clone(), json!(1));
                values.push(json!(format!("you sent {form}.")));
            }
        }
        value["echo"] = json!({"values": values, "keys": keys, "urls": urls});
    }
    let mut response = (status, Body::from(value.to_string())).into_response();
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    response.headers_mut().extend(extra);
    response
}

async fn echoing(sandbox: &Sandbox) -> String {
    let state = Arc::new(Echo {
        sandbox: sandbox.base_url(),
        http: http_client(),
    });
    serve(axum::Router::new().fallback(echo).with_state(state)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_headers_and_the_token_echoed_in_every_spelling_and_place_are_scrubbed() {
    let sandbox = sandbox_with(SandboxOptions {
        token: TOKEN.to_string(),
        ..fast_options()
    })
    .await;
    let base = echoing(&sandbox).await;
    let config = format!(
        "[target.headers]\nX-Gateway-Key = \"{LITERAL}\"\n\
         X-Client-Secret = \"{{{{ env.PP_TEST_CLIENT_SECRET }}}}\"\n"
    );
    let header = format!("X-Session-Token: {FLAG}");
    let (finished, evidence, dir) = Run::at(&base, TOKEN)
        .config(&config)
        .env("PP_TEST_CLIENT_SECRET", FROM_ENV)
        .args(&[
            "--scenario",
            "smoke",
            "--header",
            &header,
            "-v",
            "--no-progress",
        ])
        .evidence()
        .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(evidence.to_string().contains("<redacted>"));
    let har = ppcert(
        dir.path(),
        &["export", "--har", "b", "--out", "run.har"],
        None,
    )
    .await;
    assert_eq!(har.code, 0, "{}", har.stderr);
    let report = ppcert(dir.path(), &["report", "b"], None).await;
    let mut texts = vec![
        ("stdout".to_string(), finished.stdout.clone()),
        ("stderr".to_string(), finished.stderr.clone()),
        (
            "report".to_string(),
            format!("{}{}", report.stdout, report.stderr),
        ),
        (
            "har".to_string(),
            std::fs::read_to_string(dir.path().join("run.har")).unwrap(),
        ),
    ];
    for entry in std::fs::read_dir(dir.path().join("b")).unwrap() {
        let path = entry.unwrap().path();
        if let Ok(text) = std::fs::read_to_string(&path) {
            texts.push((path.display().to_string(), text));
        }
    }
    let journal = std::fs::read_to_string(dir.path().join("b/journal.jsonl")).unwrap();
    assert!(
        journal.contains("you sent <redacted>."),
        "the echoes were recorded, scrubbed"
    );
    for secret in [TOKEN, LITERAL, FLAG, FROM_ENV] {
        for form in spellings(secret) {
            for (name, text) in &texts {
                assert!(!text.contains(&form), "{name} holds {secret} as {form}");
            }
        }
    }
}

//! Shared fixtures: a sandbox on an ephemeral port, a client for it, valid request bodies.

use chrono::{Duration, SecondsFormat, Utc};
use ppcert::sandbox::{Sandbox, SandboxOptions};
use serde_json::{Value, json};

pub async fn sandbox_with(options: SandboxOptions) -> Sandbox {
    Sandbox::start(options)
        .await
        .expect("sandbox starts on loopback")
}

pub async fn sandbox() -> Sandbox {
    sandbox_with(SandboxOptions::default()).await
}

/// A plain reqwest client; ppcert's TLS provider is installed first, as the binary does.
pub fn http_client() -> reqwest::Client {
    ppcert::engine::client::install_crypto_provider();
    reqwest::Client::new()
}

/// A raw HTTP client for a sandbox, with the spec's headers.
pub struct Api {
    pub base: String,
    pub token: String,
    pub http: reqwest::Client,
}

pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Api {
    pub fn new(sandbox: &Sandbox) -> Api {
        Api {
            base: sandbox.base_url(),
            token: sandbox.token().to_string(),
            http: http_client(),
        }
    }

    pub async fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Reply {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("Content-Type", "application/JSON")
            .header("accept", "application/JSON")
            .header("Authorization", format!("Bearer {}", self.token));
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send().await.expect("sandbox answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            body,
            headers,
        }
    }

    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        self.send("POST", path, Some(body)).await
    }

    /// POST /quotes for `travelers` adults on one flight `days` ahead; returns (id, reference).
    pub async fn quote(&self, travelers: usize, price: f64) -> (String, String) {
        self.quote_with(&quote_body(travelers, price, 30)).await
    }

    /// POST /quotes with `body`, which must be accepted; returns (id, reference).
    pub async fn quote_with(&self, body: &Value) -> (String, String) {
        let reply = self.post("/quotes", body).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let data = &reply.body["data"];
        (
            data["id"].as_str().unwrap().to_string(),
            data["reference"].as_str().unwrap().to_string(),
        )
    }

    /// Quote then subscribe `booking` for one adult; returns the WITHDRAWAL contract id.
    pub async fn subscribe(&self, booking: &str) -> String {
        let (_, reference) = self.quote(1, 400.0).await;
        let reply = self
            .post(
                "/subscriptions",
                &subscription_body(booking, &[(&reference, 1)]),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        reply.body["data"]["contracts"][0]["id"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

pub fn iso(at: chrono::DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, false)
}

pub fn flight(days_ahead: i64) -> Value {
    let departure = Utc::now() + Duration::days(days_ahead);
    json!({
        "airlineIata": "AF", "number": "1234",
        "departureAirportIata": "CDG", "arrivalAirportIata": "FCO",
        "departureDate": iso(departure), "arrivalDate": iso(departure + Duration::minutes(125)),
    })
}

pub fn quote_body(travelers: usize, price: f64, days_ahead: i64) -> Value {
    json!({"data": {
        "currency": "EUR",
        "trips": [{
            "price": {"amount": price, "currency": "EUR"},
            "journeys": [{"flights": [flight(days_ahead)]}],
            "travelers": vec![json!({"ageRange": "ADULT"}); travelers],
        }],
    }})
}

pub fn traveler(i: usize) -> Value {
    json!({"ageRange": "ADULT", "birthdate": "1980-02-03", "firstName": format!("Ana{i}"), "lastName": "Lopez"})
}

pub fn client() -> Value {
    json!({"email": "ana@example.com", "firstname": "Ana", "lastname": "Lopez"})
}

/// A subscription body using (reference, traveler count) pairs.
pub fn subscription_body(booking: &str, quotes: &[(&str, usize)]) -> Value {
    let quotes: Vec<Value> = quotes
        .iter()
        .map(|(reference, n)| json!({"reference": reference, "travelers": (0..*n).map(traveler).collect::<Vec<_>>()}))
        .collect();
    json!({"data": {"bookingNumber": booking, "quotes": quotes, "client": client()}})
}

pub fn update_body(quote_id: &str, travelers: usize) -> Value {
    json!({"data": {"quotes": [{"id": quote_id, "travelers": (0..travelers).map(traveler).collect::<Vec<_>>()}], "client": client()}})
}

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

pub fn sandbox_counts(sandbox: &Sandbox) -> std::collections::BTreeMap<String, u64> {
    sandbox
        .counts()
        .into_iter()
        .map(|(op, n)| (op.as_str().to_string(), n))
        .collect()
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

/// Serves `router` on an ephemeral loopback port; returns its base URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    base
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

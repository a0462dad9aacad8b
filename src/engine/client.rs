//! The API client: the spec's headers on every call, a per-request timeout, and retries with
//! exponential backoff and jitter for retryable failures. Every attempt is returned for the record.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{SecondsFormat, Utc};
use rand::RngExt;
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::cancel::Cancel;
use crate::record::{Body, RequestRecord, ResponseRecord};
use crate::secret::{REDACTED_BEARER, Secret};

/// Bodies kept in the evidence are cut at this size; larger ones are not parsed.
pub const MAX_KEPT_BODY: usize = 64 * 1024;
/// Reading stops here: a larger body is an error, never a memory problem.
pub const MAX_READ_BODY: usize = 16 * 1024 * 1024;
/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

#[derive(Clone)]
pub struct ApiClient {
    http: reqwest::Client,
    base: String,
    token: Secret,
    retries: u32,
    backoff: Duration,
}

/// One request to send.
pub struct Request {
    pub method: Method,
    pub path: String,
    pub body: Option<Value>,
    /// The endpoint's configured headers (checked when the endpoints compiled).
    pub headers: Vec<(String, String)>,
    /// Sent instead of the real token (the bad-token conformance check).
    pub wrong_token: Option<String>,
    /// Whether an attempt that got no answer (connection refused, timeout) is tried again.
    pub retry_without_answer: bool,
}

/// One attempt as it happened.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub number: u32,
    pub url: String,
    pub started_at: String,
    pub duration: Duration,
    pub request: RequestRecord,
    pub response: Option<ResponseRecord>,
    pub error: Option<String>,
    /// The request left and may have been processed, but no complete answer came back.
    pub maybe_processed: bool,
    /// No connection could be made at all.
    pub unreachable: bool,
}

impl Attempt {
    pub fn status(&self) -> Option<u16> {
        self.response.as_ref().map(|r| r.status)
    }

    fn retry_delay(&self) -> Option<Option<Duration>> {
        match &self.response {
            None => Some(None),
            Some(r) if matches!(r.status, 429 | 503) => Some(announced_wait(&r.headers)),
            Some(r) if matches!(r.status, 502 | 504) => Some(None),
            Some(_) => None,
        }
    }
}

/// The wait a 429 or 503 announces: `Retry-After`, else `RateLimit-Reset` or
/// `X-RateLimit-Reset` (delta seconds, or a Unix time when larger than now), else the `t`
/// parameter of a structured `RateLimit` header.
pub fn announced_wait(headers: &BTreeMap<String, String>) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    if let Some(wait) = get("retry-after").and_then(parse_retry_after) {
        return Some(wait);
    }
    let reset = get("ratelimit-reset")
        .or_else(|| get("x-ratelimit-reset"))
        .or_else(|| {
            get("ratelimit")?
                .split([';', ','])
                .find_map(|part| part.trim().strip_prefix("t="))
        })?;
    parse_reset(reset, Utc::now().timestamp())
}

/// A reset value: delta seconds, or a Unix time in seconds when it is larger than `now`
/// (no delta is that long). Fractions round up, so the retry never comes early.
fn parse_reset(value: &str, now: i64) -> Option<Duration> {
    let seconds: f64 = value
        .trim()
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)?;
    let seconds = seconds.ceil() as i64;
    let delta = if seconds > now {
        seconds - now
    } else {
        seconds
    };
    Some(Duration::from_secs(delta.max(0) as u64).min(MAX_RETRY_AFTER))
}

/// `Retry-After`: delta-seconds or an HTTP date.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    if let Ok(secs) = value.trim().parse::<u64>() {
        return Some(Duration::from_secs(secs).min(MAX_RETRY_AFTER));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value.trim()).ok()?;
    let wait = (at.with_timezone(&Utc) - Utc::now())
        .to_std()
        .unwrap_or_default();
    Some(wait.min(MAX_RETRY_AFTER))
}

/// rustls on `ring`: a TLS stack that builds with no C toolchain or cmake (aws-lc-sys
/// was most of a cold build). Installing twice is harmless, so every client may ask.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl ApiClient {
    pub fn new(
        base_url: &str,
        token: Secret,
        timeout: Duration,
        retries: u32,
        backoff: Duration,
        cacert: Option<&std::path::Path>,
    ) -> Result<ApiClient, String> {
        install_crypto_provider();
        let mut builder = reqwest::Client::builder();
        if let Some(path) = cacert {
            let pem = std::fs::read(path)
                .map_err(|e| format!("--cacert {}: cannot read: {e}", path.display()))?;
            let certificate = reqwest::Certificate::from_pem(&pem)
                .map_err(|e| format!("--cacert {}: not a PEM certificate: {e}", path.display()))?;
            builder = builder.add_root_certificate(certificate);
        }
        let http = builder
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("ppcert/", env!("CARGO_PKG_VERSION")))
            // A redirect is the server's answer, not a place to send the write again (reqwest
            // would re-send a POST as a GET, and count a login page as a success).
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(ApiClient {
            http,
            base: base_url.trim_end_matches('/').to_string(),
            token,
            retries,
            backoff,
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends `request`, retrying retryable failures; returns every attempt, the last one final.
    pub async fn execute(&self, request: &Request, cancel: &Cancel) -> Vec<Attempt> {
        let mut attempts: Vec<Attempt> = Vec::new();
        loop {
            let attempt = self.attempt(request, attempts.len() as u32 + 1).await;
            let delay = attempt.retry_delay();
            attempts.push(attempt);
            let Some(announced) = delay else { break };
            if !request.retry_without_answer
                && attempts.last().is_some_and(|a| a.response.is_none())
            {
                break;
            }
            if attempts.len() as u32 > self.retries || cancel.is_cancelled() {
                break;
            }
            let wait = announced.unwrap_or_else(|| self.backoff_delay(attempts.len() as u32));
            if !cancel.sleep(wait).await {
                break;
            }
        }
        attempts
    }

    /// Exponential backoff with full jitter on top: base × 2^(n-1) + [0, base), capped at 10 s.
    fn backoff_delay(&self, attempt: u32) -> Duration {
        let exp = self.backoff.saturating_mul(1 << (attempt - 1).min(10));
        let jitter_ms = rand::rng().random_range(0..=self.backoff.as_millis().max(1) as u64);
        (exp + Duration::from_millis(jitter_ms)).min(Duration::from_secs(10))
    }

    fn headers(&self, request: &Request) -> (HeaderMap, RequestRecord) {
        let mut headers = HeaderMap::new();
        let bearer = format!(
            "Bearer {}",
            request
                .wrong_token
                .as_deref()
                .unwrap_or(self.token.expose())
        );
        let mut recorded = BTreeMap::new();
        for (name, value) in [
            ("content-type", "application/JSON"),
            ("accept", "application/JSON"),
        ] {
            headers.insert(name, value.parse().expect("static header"));
            recorded.insert(name.to_string(), value.to_string());
        }
        if let Ok(mut value) = bearer.parse::<reqwest::header::HeaderValue>() {
            value.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        recorded.insert("authorization".into(), REDACTED_BEARER.into());
        for (name, value) in &request.headers {
            if let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                reqwest::header::HeaderValue::from_str(value),
            ) {
                recorded.insert(
                    name.as_str().to_string(),
                    self.token.scrub(value.to_str().unwrap_or_default()),
                );
                headers.insert(name, value);
            }
        }
        let record = RequestRecord {
            headers: recorded,
            body: request.body.as_ref().map(Body::from_value),
        };
        (headers, record)
    }

    async fn attempt(&self, request: &Request, number: u32) -> Attempt {
        let url = self.url(&request.path);
        let (headers, record) = self.headers(request);
        let started_at = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
        let clock = Instant::now();
        let mut builder = self
            .http
            .request(request.method.clone(), &url)
            .headers(headers);
        if let Some(body) = &record.body {
            builder = builder.body(body.json().to_owned());
        }
        let mut attempt = Attempt {
            number,
            url: url.clone(),
            started_at,
            duration: Duration::ZERO,
            request: record,
            response: None,
            error: None,
            maybe_processed: false,
            unreachable: false,
        };
        match builder.send().await {
            Err(e) => {
                attempt.unreachable = e.is_connect();
                attempt.maybe_processed = !e.is_connect();
                attempt.error = Some(self.token.scrub(&describe(&e)));
            }
            Ok(response) => match read_response(response, &self.token).await {
                Ok(response) => {
                    // A gateway's 502/504 says nothing of whether the server behind it did the
                    // write: a non-idempotent one may have been processed, as a lost answer.
                    attempt.maybe_processed = matches!(response.status, 502 | 504)
                        && !matches!(request.method, Method::GET | Method::HEAD);
                    attempt.response = Some(response);
                }
                Err(e) => {
                    attempt.maybe_processed = true;
                    attempt.error = Some(self.token.scrub(&e));
                }
            },
        }
        attempt.duration = clock.elapsed();
        attempt
    }
}

fn describe(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    let mut text = format!("{kind}: {e}");
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        text.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    text.push_str(tls_hint(&text));
    text
}

/// What to do about a certificate the client does not trust: usually a TLS-inspecting
/// corporate proxy or a staging signed by a private CA.
pub(crate) fn tls_hint(error: &str) -> &'static str {
    let lower = error.to_ascii_lowercase();
    if lower.contains("certificate") || lower.contains("unknownissuer") || lower.contains("tls") {
        " (a TLS-inspecting proxy or a private CA? pass its root certificate with --cacert FILE)"
    } else {
        ""
    }
}

/// Reads the body up to [`MAX_READ_BODY`], keeps at most [`MAX_KEPT_BODY`] of it, parsed as
/// JSON when it is JSON, else as text.
async fn read_response(
    mut response: reqwest::Response,
    token: &Secret,
) -> Result<ResponseRecord, String> {
    let status = response.status().as_u16();
    let mut headers = BTreeMap::new();
    for (name, value) in response.headers() {
        let value = String::from_utf8_lossy(value.as_bytes());
        headers.insert(name.as_str().to_string(), token.scrub(&value));
    }
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > MAX_READ_BODY {
                    return Err(format!(
                        "HTTP {status}: body larger than {} MiB, not read further",
                        MAX_READ_BODY >> 20
                    ));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => {
                return Err(format!(
                    "HTTP {status} but the body was cut off: {}",
                    describe(&e)
                ));
            }
        }
    }
    let (body, body_truncated, full_json) = keep_body(&bytes, token);
    Ok(ResponseRecord {
        status,
        headers,
        body,
        body_truncated,
        full_json,
    })
}

/// JSON when it parses and is small enough; otherwise text, cut at [`MAX_KEPT_BODY`]. JSON of
/// any readable size is parsed first: the whole of it comes back for reading values.
pub fn keep_body(bytes: &[u8], token: &Secret) -> (Body, bool, Option<std::sync::Arc<Value>>) {
    if bytes.is_empty() {
        return (Body::null(), false, None);
    }
    if let Ok(mut value) = serde_json::from_slice::<Value>(bytes) {
        token.scrub_json(&mut value);
        if bytes.len() <= MAX_KEPT_BODY {
            return (Body::from_value(&value), false, None);
        }
        let text = value.to_string();
        let cut = text.floor_char_boundary(MAX_KEPT_BODY);
        let kept = Body::from_value(&Value::String(text[..cut].to_string()));
        return (kept, true, Some(std::sync::Arc::new(value)));
    }
    // Scrubbed whole, then cut: a token split by the cut would leave its first half behind.
    let text = token.scrub(&String::from_utf8_lossy(bytes));
    let cut = text.floor_char_boundary(MAX_KEPT_BODY);
    (
        Body::from_value(&Value::String(text[..cut].to_string())),
        text.len() > MAX_KEPT_BODY,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untrusted_certificate_points_to_cacert() {
        // rustls's words for a certificate signed by an unknown CA, as reqwest chains them.
        let untrusted = "connection failed: error sending request: client error (Connect): invalid peer certificate: UnknownIssuer";
        assert!(tls_hint(untrusted).contains("--cacert FILE"));
        assert_eq!(
            tls_hint("connection failed: Connection refused (os error 111)"),
            ""
        );
    }

    fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn waits_honour_retry_after_and_rate_limit_resets() {
        let now = Utc::now().timestamp();
        let in_5 = (now + 5).to_string();
        for (pairs, expected) in [
            (vec![("retry-after", "2")], Some(2)),
            (vec![("RateLimit-Reset", "1")], Some(1)),
            (vec![("x-ratelimit-reset", "3")], Some(3)),
            (vec![("x-ratelimit-reset", in_5.as_str())], Some(5)),
            (vec![("ratelimit", "\"default\";r=0;t=4")], Some(4)),
            (
                vec![("retry-after", "1"), ("ratelimit-reset", "9")],
                Some(1),
            ),
            (vec![("ratelimit-reset", "0.2")], Some(1)),
            (vec![("ratelimit-reset", "soon")], None),
            (vec![], None),
        ] {
            let wait = announced_wait(&headers(&pairs)).map(|d| d.as_secs());
            // A Unix time is read against the clock; a second may pass in between.
            let ok = match (wait, expected) {
                (Some(w), Some(e)) => w == e || (e == 5 && w == 4),
                (w, e) => w.is_none() && e.is_none(),
            };
            assert!(ok, "{pairs:?}: {wait:?}");
        }
    }
}

//! The API client: the spec's headers on every call, a per-request timeout, and retries with
//! exponential backoff and jitter for retryable failures. Every attempt is returned for the record.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::RngExt;
use reqwest::Method;
use reqwest::header::HeaderMap;

use super::response::{describe, read_response};
use super::retry_after::announced_wait;
use crate::endpoints::Payload;
use crate::engine::cancel::Cancel;
use crate::engine::token::{Lease, Tokens};
use crate::record::{Body, Delivery, RequestRecord, ResponseRecord};
use crate::secret::{REDACTED, REDACTED_BEARER};
use crate::timestamp::Timestamp;
use crate::trace::TraceId;

/// Configured headers whose values the evidence shows; any other configured header (an API
/// key, a gateway secret) is recorded as [`REDACTED`].
const RECORDED_HEADERS: [&str; 9] = [
    "content-type",
    "accept",
    "idempotency-key",
    "traceparent",
    "x-idempotency-key",
    "x-request-id",
    "x-correlation-id",
    "accept-language",
    "prefer",
];

#[derive(Clone)]
pub(crate) struct ApiClient {
    http: reqwest::Client,
    base: String,
    tokens: std::sync::Arc<Tokens>,
    retries: u32,
    backoff: Duration,
}

/// One request to send.
pub(crate) struct Request {
    pub method: Method,
    pub path: String,
    /// JSON, text or multipart parts; sent with the `Content-Type` configured, else JSON.
    pub body: Option<Payload>,
    /// The endpoint's configured headers (checked when the endpoints compiled).
    pub headers: Vec<(String, String)>,
    /// Sent instead of the real token (the bad-token conformance check).
    pub wrong_token: Option<String>,
    /// Whether an attempt that got no answer (connection refused, timeout) is tried again.
    pub retry_without_answer: bool,
    /// Whether a 401 that rejects the token gets a new token and one more try. Not before the
    /// first call has settled the gate: a bad token then costs the documented few requests.
    pub renew_on_rejection: bool,
    /// The number of the first attempt: 1, or one past the attempts an earlier send of the
    /// same call made (a re-send reconciling a lost answer numbers on, so the record shows
    /// one call, not another).
    pub first_attempt: u32,
}

/// One attempt as it happened.
#[derive(Debug, Clone)]
pub(crate) struct Attempt {
    pub number: u32,
    pub url: String,
    pub started_at: Timestamp,
    pub duration: Duration,
    pub request: RequestRecord,
    pub response: Option<ResponseRecord>,
    pub error: Option<String>,
    /// `MaybeProcessed` when the request left but no complete answer came back (or a 5xx
    /// did); `Reconciled` once a conflict confirms an earlier attempt's success.
    pub delivery: Delivery,
    /// No connection could be made at all.
    pub unreachable: bool,
    /// The fingerprint of the token the attempt carried.
    pub token_fingerprint: Option<String>,
}

impl Attempt {
    pub(crate) fn status(&self) -> Option<u16> {
        self.response.as_ref().map(|r| r.status)
    }

    /// Whether the client would try this attempt again: no answer, 429, or a 5xx other than
    /// 501 and 505. A reconciliation that sends a write again judges its answers by this.
    pub(crate) fn is_retryable(&self) -> bool {
        self.retry() != Retry::No
    }

    fn retry(&self) -> Retry {
        match &self.response {
            None => Retry::Backoff,
            Some(r) if matches!(r.status, 429 | 503) => {
                announced_wait(&r.headers).map_or(Retry::Backoff, Retry::After)
            }
            // Any other 5xx may be transient and, after a write, may hide a processed request:
            // its retry is what reconciles it. Not 501 or 505: they say the request can never
            // succeed as sent.
            Some(r) if r.status >= 500 && !matches!(r.status, 501 | 505) => Retry::Backoff,
            Some(_) => Retry::No,
        }
    }
}

/// What [`ApiClient::execute_told`] says of a call's attempts as they go.
pub(crate) enum Told<'a> {
    /// Attempt `number` (1 the first, unless the call numbers on) is about to be sent.
    Sending(u32),
    /// This attempt is tried again: the next one is about to be sent.
    Retried(&'a Attempt),
}

/// Whether an attempt is tried again, and after what wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// The answer is final.
    No,
    /// After the wait the server announced.
    After(Duration),
    /// After exponential backoff with jitter.
    Backoff,
}

/// A 401 that says the token itself is the problem (RFC 6750's `invalid_token`, or the body's
/// words), or that comes after the token's announced expiry: another token may be accepted.
fn token_rejected(response: &ResponseRecord, tokens: &Tokens) -> bool {
    if response.status != 401 {
        return false;
    }
    // A 401 is also the spec's answer to an update of a contract no longer valid: only words
    // about the token itself (RFC 6750's `invalid_token`, or "token" with "expired" or
    // "invalid") say another token may help.
    let says = |text: &str| {
        let text = text.to_ascii_lowercase();
        text.contains("invalid_token")
            || (text.contains("token") && (text.contains("expired") || text.contains("invalid")))
    };
    let challenge = response.header("www-authenticate").is_some_and(says);
    challenge || says(response.body.json()) || tokens.expired()
}

impl ApiClient {
    /// A client of `base_url` over `http` (the config's: `Staging::http`), retrying as
    /// `retry` says.
    pub(crate) fn new(
        base_url: &str,
        tokens: std::sync::Arc<Tokens>,
        http: reqwest::Client,
        retry: crate::config::RetryPolicy,
    ) -> ApiClient {
        ApiClient {
            http,
            base: base_url.trim_end_matches('/').to_string(),
            tokens,
            retries: retry.retries,
            backoff: retry.backoff,
        }
    }

    /// Where the client's tokens come from.
    pub(crate) fn tokens(&self) -> &std::sync::Arc<Tokens> {
        &self.tokens
    }

    pub(crate) fn url(&self, path: &str) -> String {
        // A confirmation follows a `Location` the target gave, checked to be of its origin.
        if path.starts_with("http://") || path.starts_with("https://") {
            return path.to_string();
        }
        format!("{}{path}", self.base)
    }

    /// Sends `request`, retrying retryable failures; returns every attempt, the last one final.
    pub(crate) async fn execute(&self, request: &Request, cancel: &Cancel) -> Vec<Attempt> {
        self.execute_told(request, cancel, &mut |_| {}).await
    }

    /// [`execute`](Self::execute), telling `tell` of each attempt before it is sent, and of
    /// each retried one before its retry is: a write's record is then ahead of what the
    /// server may have done, whenever the run dies.
    pub(crate) async fn execute_told(
        &self,
        request: &Request,
        cancel: &Cancel,
        tell: &mut (dyn FnMut(Told<'_>) + Send),
    ) -> Vec<Attempt> {
        let mut attempts: Vec<Attempt> = Vec::new();
        let mut renewed = false;
        // One trace per call, so the provider sees a call's retries together.
        let trace = TraceId::random();
        loop {
            let lease = self.tokens.lease().await;
            if let Some(retried) = attempts.last() {
                tell(Told::Retried(retried));
            }
            let number = request.first_attempt.max(1) + attempts.len() as u32;
            tell(Told::Sending(number));
            let attempt = self.attempt(request, number, trace, &lease).await;
            let rejected = request.wrong_token.is_none()
                && attempt
                    .response
                    .as_ref()
                    .is_some_and(|r| token_rejected(r, &self.tokens));
            attempts.push(attempt);
            if rejected {
                // Once per call: a token rejected again after renewal is not the token's age.
                if renewed || !self.tokens.renews() || !request.renew_on_rejection {
                    self.tokens.give_up();
                    break;
                }
                renewed = true;
                if self.tokens.renew(lease.generation).await.is_err() {
                    self.tokens.give_up();
                    break;
                }
                continue;
            }
            let retry = attempts.last().map_or(Retry::No, Attempt::retry);
            if retry == Retry::No {
                break;
            }
            if !request.retry_without_answer
                && attempts.last().is_some_and(|a| a.response.is_none())
            {
                break;
            }
            if attempts.len() as u32 > self.retries || cancel.is_cancelled() {
                break;
            }
            let wait = match retry {
                Retry::After(announced) => announced,
                _ => self.backoff_delay(attempts.len() as u32),
            };
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

    fn headers(
        &self,
        request: &Request,
        lease: &Lease,
        trace: TraceId,
    ) -> (HeaderMap, RequestRecord) {
        let mut headers = HeaderMap::new();
        let bearer = format!(
            "Bearer {}",
            request
                .wrong_token
                .as_deref()
                .unwrap_or(lease.token.expose())
        );
        let mut recorded = BTreeMap::new();
        let traceparent = trace.attempt();
        for (name, value) in [
            ("content-type", "application/JSON"),
            ("accept", "application/JSON"),
            (crate::trace::HEADER, traceparent.as_str()),
            ("accept-encoding", super::encoding::ACCEPT_ENCODING),
        ] {
            headers.insert(name, value.parse().expect("an ASCII header"));
            recorded.insert(name.to_string(), value.to_string());
        }
        // Recorded only when sent: a token no header can carry is never `Bearer <redacted>`.
        if let Ok(mut value) = bearer.parse::<reqwest::header::HeaderValue>() {
            value.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, value);
            recorded.insert("authorization".into(), REDACTED_BEARER.into());
        }
        for (name, value) in &request.headers {
            if let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                reqwest::header::HeaderValue::from_str(value),
            ) {
                // A configured header may carry a gateway key: only values known to be
                // harmless are recorded; the rest are kept out of the evidence.
                let shown = if RECORDED_HEADERS.contains(&name.as_str()) {
                    self.tokens.scrub(value.to_str().unwrap_or_default())
                } else {
                    REDACTED.to_string()
                };
                recorded.insert(name.as_str().to_string(), shown);
                headers.insert(name, value);
            }
        }
        // A multipart body's type names its boundary, whatever was configured.
        let multipart = request.body.as_ref().and_then(|b| b.content_type());
        if let Some(value) = multipart.and_then(|t| t.parse().ok()) {
            recorded.insert(
                "content-type".into(),
                String::from_utf8_lossy(reqwest::header::HeaderValue::as_bytes(&value))
                    .into_owned(),
            );
            headers.insert(reqwest::header::CONTENT_TYPE, value);
        }
        let record = RequestRecord {
            headers: recorded,
            body: request.body.as_ref().map(recorded_body),
            cut: None,
        };
        (headers, record)
    }

    async fn attempt(
        &self,
        request: &Request,
        number: u32,
        trace: TraceId,
        lease: &Lease,
    ) -> Attempt {
        let url = self.url(&request.path);
        let (headers, record) = self.headers(request, lease, trace);
        let started_at = Timestamp::now();
        let clock = Instant::now();
        let mut builder = self
            .http
            .request(request.method.clone(), &url)
            .headers(headers);
        if let Some(body) = &request.body {
            // A JSON body travels as the very text recorded: serialized once, not twice.
            let bytes = match (body, &record.body) {
                (Payload::Json(_), Some(recorded)) => recorded.json().as_bytes().to_vec(),
                _ => body.bytes(),
            };
            builder = builder.body(bytes);
        }
        let mut attempt = Attempt {
            number,
            url: url.clone(),
            started_at,
            duration: Duration::ZERO,
            request: record,
            response: None,
            error: None,
            delivery: Delivery::Answered,
            unreachable: false,
            token_fingerprint: request
                .wrong_token
                .is_none()
                .then(|| lease.token.fingerprint()),
        };
        match builder.send().await {
            Err(e) => {
                attempt.unreachable = e.is_connect();
                if !e.is_connect() {
                    attempt.delivery = Delivery::MaybeProcessed;
                }
                attempt.error = Some(self.tokens.scrub(&describe(&e)));
            }
            Ok(response) => match read_response(response, self.tokens.as_ref()).await {
                Ok(response) => {
                    // A 5xx (a gateway's 502/504, a 503 from a server that failed after
                    // writing, any other) says nothing of whether the write was done: a
                    // non-idempotent one may have been processed, as with a lost answer.
                    // A 503 that announces when to come back is the server declining the
                    // request, not failing after it: nothing was processed.
                    let declined =
                        response.status == 503 && announced_wait(&response.headers).is_some();
                    if response.status >= 500
                        && !declined
                        && !matches!(request.method, Method::GET | Method::HEAD)
                    {
                        attempt.delivery = Delivery::MaybeProcessed;
                    }
                    attempt.response = Some(response);
                }
                Err(e) => {
                    attempt.delivery = Delivery::MaybeProcessed;
                    attempt.error = Some(self.tokens.scrub(&e.to_string()));
                }
            },
        }
        attempt.duration = clock.elapsed();
        attempt
    }
}

/// The request body as the evidence records it; a JSON body without a copy of its value
/// (the same text as [`Payload::record`]'s).
fn recorded_body(payload: &Payload) -> Body {
    match payload {
        Payload::Json(value) => Body::from_value(value),
        other => Body::from_value(&other.record()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::response::tls_hint;
    use super::*;

    fn unauthorized(challenge: Option<&str>, body: serde_json::Value) -> ResponseRecord {
        ResponseRecord {
            status: 401,
            headers: challenge
                .map(|c| ("www-authenticate".to_string(), c.to_string()))
                .into_iter()
                .collect(),
            body: Body::from_value(&body),
            body_truncated: false,
            full_json: None,
            cut: None,
            tls_certificate_sha256: None,
            encoding: None,
        }
    }

    #[test]
    fn only_a_401_about_the_token_asks_for_another_token() {
        let http = crate::config::webhook_http().unwrap();
        let tokens = Tokens::fixed(crate::secret::Secret::new("tok-0123456789abcdef"), http);
        let expired = serde_json::json!({"error": {"code": "TOKEN_EXPIRED", "message": "The access token expired"}});
        assert!(token_rejected(&unauthorized(None, expired), &tokens));
        let challenge = Some(r#"Bearer error="invalid_token""#);
        assert!(token_rejected(
            &unauthorized(challenge, serde_json::json!(null)),
            &tokens
        ));
        // The spec's 401 for an update of a contract no longer valid is not about the token.
        let contract = serde_json::json!({"error": {"code": "CONTRACT_INVALID", "message": "the contract expired: departure has passed"}});
        assert!(!token_rejected(&unauthorized(None, contract), &tokens));
    }

    #[test]
    fn an_untrusted_certificate_points_to_cacert() {
        // rustls's words for a certificate signed by an unknown CA, as reqwest chains them.
        let untrusted = "connection failed: error sending request: client error (Connect): invalid peer certificate: UnknownIssuer";
        assert!(tls_hint(untrusted).contains("--cacert FILE"));
        // TLS 1.3's alert when the staging wants a client certificate and got none.
        let required = "request failed: received fatal alert: CertificateRequired";
        assert!(tls_hint(required).contains("--cert FILE --key FILE"));
        assert!(!tls_hint(required).contains("--cacert"));
        let refused = "request failed: received fatal alert: UnknownCA";
        assert!(tls_hint(refused).contains("refused the client certificate"));
        assert_eq!(
            tls_hint("connection failed: Connection refused (os error 111)"),
            ""
        );
    }
}

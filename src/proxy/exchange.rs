//! Turning one forwarded request and its answer into the record `run` writes: an [`Exchange`]
//! with the partner's `Authorization` redacted (only its fingerprint kept), bodies scrubbed of
//! the token, the checks made, and its outcome.

use std::collections::BTreeMap;

use axum::http::HeaderMap;

use axum::body::Bytes;
use serde_json::Value;

use crate::engine::http::keep_body;
use crate::models::Operation;
use crate::record::{
    Body, Check, CutBody, Delivery, Exchange, Expectation, Outcome, RequestRecord, ResponseRecord,
};
use crate::secret::Secret;
use crate::timestamp::Timestamp;

/// Bodies longer than this are forwarded unchanged but kept cut in the evidence, with their
/// length and SHA-256: the API's bodies are a few kilobytes, and a flood of large ones must
/// not fill the disk.
pub(crate) const PROXY_KEPT_BODY: usize = 16 * 1024;

/// A body as the proxy records it: whole up to [`PROXY_KEPT_BODY`], else its first part
/// (scrubbed as far as a token across the cut needs, then cut) with what it was. The whole JSON comes back for
/// reading values.
fn kept(
    bytes: &[u8],
    token: &Secret,
) -> (
    Body,
    bool,
    Option<std::sync::Arc<Value>>,
    Option<Box<CutBody>>,
) {
    if bytes.len() <= PROXY_KEPT_BODY {
        let (body, truncated, full_json) = keep_body(bytes, token);
        return (body, truncated, full_json, None);
    }
    let full_json = serde_json::from_slice::<Value>(bytes)
        .ok()
        .map(|mut value| {
            token.scrub_json(&mut value);
            std::sync::Arc::new(value)
        });
    let (body, cut) = kept_cut(bytes, token);
    (body, true, full_json, cut)
}

/// A large body's first part, scrubbed (only as far as a secret across the cut needs: the
/// rest is never searched), with its length and SHA-256.
fn kept_cut(bytes: &[u8], token: &Secret) -> (Body, Option<Box<CutBody>>) {
    (kept_prefix(bytes, token), cut_of(bytes))
}

/// The length and SHA-256 a request or answer body is recorded with when it is cut.
pub(crate) fn cut_of(bytes: &[u8]) -> Option<Box<CutBody>> {
    CutBody::of(bytes, PROXY_KEPT_BODY)
}

/// A request body as recorded: no JSON of it is kept, so a large one is not parsed again.
/// `digest`: its cut's length and SHA-256 when already taken (beside the forwarding).
fn kept_request(
    bytes: &[u8],
    token: &Secret,
    digest: Option<Box<CutBody>>,
) -> (Body, Option<Box<CutBody>>) {
    if bytes.len() <= PROXY_KEPT_BODY {
        return (keep_body(bytes, token).0, None);
    }
    match digest {
        Some(cut) => (kept_prefix(bytes, token), Some(cut)),
        None => kept_cut(bytes, token),
    }
}

/// A large body's first part as recorded, scrubbed.
fn kept_prefix(bytes: &[u8], token: &Secret) -> Body {
    let (text, _) = token.scrub_prefix(bytes, PROXY_KEPT_BODY);
    Body::from_value(&Value::String(text))
}

/// The partner's own bearer token, if it sent one: never recorded, only its fingerprint.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))?;
    Some(token.trim().to_string())
}

/// Headers as recorded: credentials replaced by a fingerprint.
pub(crate) fn recorded_headers(
    headers: &HeaderMap,
    token: Option<&Secret>,
) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let shown = match name.as_str() {
                "authorization" => match token {
                    Some(token) => {
                        format!("Bearer <redacted, fingerprint {}>", token.fingerprint())
                    }
                    None => crate::secret::REDACTED.to_string(),
                },
                name if crate::secret::names_a_credential(name) => "<redacted>".to_string(),
                _ => {
                    let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
                    token.map_or(text.clone(), |t| t.scrub(&text))
                }
            };
            (name.as_str().to_string(), shown)
        })
        .collect()
}

pub(crate) fn response_record(
    status: u16,
    headers: &HeaderMap,
    body: &[u8],
    token: &Secret,
) -> ResponseRecord {
    // Forwarded as it came; recorded decoded, so the evidence and the counting read it.
    let encoding = headers
        .get("content-encoding")
        .and_then(|v| v.to_str().ok());
    let limit = crate::engine::http::MAX_READ_BODY;
    let (decoded, encoding, error) =
        match crate::engine::http::decode(encoding, body.to_vec(), limit) {
            Ok((decoded, encoding)) => (decoded, encoding, None),
            Err(why) => (Vec::new(), None, Some(why.to_string())),
        };
    let (mut body, body_truncated, full_json, cut) = kept(&decoded, token);
    if let Some(why) = error {
        // The bytes are not shown: they are binary, and the proxy forwarded them untouched.
        body = Body::from_value(&Value::String(format!("<{why}>")));
    }
    ResponseRecord {
        status,
        headers: recorded_headers(headers, Some(token)),
        body,
        body_truncated,
        full_json,
        cut,
        tls_certificate_sha256: None,
        encoding,
    }
}

/// What one forwarded (or locally refused) request was.
pub(crate) struct Forwarded {
    pub operation: Operation,
    pub booking: Option<String>,
    pub method: String,
    pub url: String,
    pub started_at: Timestamp,
    pub duration_ms: u64,
    pub request_headers: BTreeMap<String, String>,
    pub request_body: Bytes,
    /// The request body's cut (length and SHA-256) when it was taken before the record is
    /// made; else it is taken then.
    pub request_cut: Option<Box<CutBody>>,
    /// The spec's view of the request body, parsed once when it was judged (`Null` for a
    /// request without one): what the answer teaches and a claim's status are read from it.
    pub request_view: std::sync::Arc<Value>,
    pub response: Option<ResponseRecord>,
    pub error: Option<String>,
    pub checks: Vec<Check>,
    /// The operation's success rule, as `run` counts it.
    pub success: crate::endpoints::SuccessRule,
    /// Values read from the answer (a claim's status).
    pub reads: Vec<crate::record::ValueRead>,
}

impl Forwarded {
    pub(crate) fn into_exchange(self, token: &Secret) -> Exchange {
        let (body, cut) = kept_request(&self.request_body, token, self.request_cut);
        let accepted = self
            .response
            .as_ref()
            .is_some_and(|r| self.success.accepts(r.status) && r.error_words().is_none());
        let mut checks = self.checks;
        if let Some(response) = &self.response {
            let detail = if accepted {
                format!("HTTP {}", response.status)
            } else {
                format!("HTTP {}: {}", response.status, response.describe())
            };
            checks.push(Check::new("the server accepted it", accepted, detail));
            checks.extend(self.success.deviation_check(response.status));
        }
        let violated = checks.iter().any(|c| !c.passed && !c.warning);
        Exchange {
            seq: 0,
            flow: self
                .booking
                .clone()
                .unwrap_or_else(|| NO_BOOKING.to_string()),
            step: self.operation.as_str().to_string(),
            operation: self.operation,
            booking_number: self.booking,
            attempt: 1,
            method: self.method,
            url: self.url,
            started_at: self.started_at,
            duration_ms: self.duration_ms,
            request: RequestRecord {
                headers: self.request_headers,
                body: (!self.request_body.is_empty()).then_some(body),
                cut,
            },
            outcome: match (&self.response, violated) {
                (None, _) => Outcome::Error,
                (Some(_), true) => Outcome::Failed,
                (Some(_), false) => Outcome::Passed,
            },
            response: self.response,
            checks,
            error: self.error,
            expectation: Expectation::Acceptance,
            retried: false,
            delivery: Delivery::Answered,
            layout: None,
            reads: self.reads,
            token_fingerprint: (!token.expose().is_empty()).then(|| token.fingerprint()),
            poll: false,
            phase: Default::default(),
        }
    }
}

/// The flow label of traffic that names no booking (a first quote, a flight report).
pub(crate) const NO_BOOKING: &str = "(no booking)";

//! Request gates of the sandbox: bearer-token check, latency, and injected faults
//! (429, 503, lost responses, 500 after a processed write) for testing clients.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rand::RngExt;

use crate::oauth::issued::Verdict;
use crate::options::RateLimitHeader;
use crate::shared::Shared;
use crate::validate::ApiFailure;

/// Spec §5: exactly `Authorization: Bearer <token>`, else 401.
pub async fn authorize(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    if shared.options.token_ttl.is_some() {
        if let Some(refusal) = refuse_issued(&shared, given) {
            return refusal;
        }
    } else if given != Some(format!("Bearer {}", shared.options.token).as_bytes()) {
        let message = if given.is_none() {
            "missing bearer token"
        } else {
            "invalid bearer token"
        };
        return ApiFailure::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message).into_response();
    }
    // A staging with encodings of its own judges media types there (`wire.rs`).
    let judged_by_wire = shared.options.wire.is_on();
    if !judged_by_wire
        && request_has_body(request.method())
        && !is_json(request.headers().get(header::CONTENT_TYPE))
    {
        return ApiFailure::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
            "Content-Type must be application/json",
        )
        .into_response();
    }
    next.run(request).await
}

/// With `--token-ttl`, only a token `/oauth/token` issued and that has not expired passes;
/// RFC 6750 §3.1 says which of the two it was.
fn refuse_issued(shared: &Shared, given: Option<&[u8]>) -> Option<Response> {
    let token = given
        .and_then(|g| std::str::from_utf8(g).ok())
        .and_then(|g| g.strip_prefix("Bearer "));
    let (code, message) = match token.map(|t| shared.issued.judge(t)) {
        Some(Verdict::Valid) => return None,
        Some(Verdict::Expired) => ("TOKEN_EXPIRED", "The access token expired"),
        Some(Verdict::Unknown) => (
            "INVALID_TOKEN",
            "The access token is not one this server issued",
        ),
        None => ("UNAUTHORIZED", "missing bearer token"),
    };
    let mut response = ApiFailure::new(StatusCode::UNAUTHORIZED, code, message).into_response();
    let challenge = format!("Bearer error=\"invalid_token\", error_description=\"{message}\"");
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    Some(response)
}

fn request_has_body(method: &Method) -> bool {
    method == Method::POST || method == Method::PATCH
}

fn is_json(value: Option<&HeaderValue>) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

fn every(n: Option<u64>, count: u64) -> bool {
    n.is_some_and(|n| n > 0 && count.is_multiple_of(n))
}

/// Latency, then the configured faults. 429 and 503 refuse before processing; a dropped
/// response is processed first, so the client cannot know whether it took effect.
pub async fn inject(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let options = &shared.options;
    let delay = options.latency + jitter(options.jitter);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let count = shared.requests.fetch_add(1, Ordering::Relaxed) + 1;
    if every(options.rate_limit_every, count) {
        let mut response = ApiFailure::new(
            StatusCode::TOO_MANY_REQUESTS,
            "RATE_LIMITED",
            "too many requests",
        )
        .into_response();
        let secs = options.retry_after_secs;
        let (name, value) = match options.rate_limit_header {
            RateLimitHeader::RetryAfter => (header::RETRY_AFTER.as_str(), secs),
            RateLimitHeader::RateLimitReset => ("ratelimit-reset", secs),
            RateLimitHeader::XRateLimitReset => (
                "x-ratelimit-reset",
                (chrono::Utc::now().timestamp().max(0) as u64) + secs,
            ),
        };
        response
            .headers_mut()
            .insert(name, HeaderValue::from(value));
        return response;
    }
    if every(options.unavailable_every, count) {
        return ApiFailure::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "UNAVAILABLE",
            "service unavailable",
        )
        .into_response();
    }
    let is_post = request.method() == Method::POST;
    let response = next.run(request).await;
    if !is_post {
        return response;
    }
    let nth = shared.posts.fetch_add(1, Ordering::Relaxed) + 1;
    if every(options.drop_every, nth) {
        return lost_response();
    }
    // The write took effect; the answer says it failed, as a crashing gateway's does.
    if response.status().is_success() && every(options.error_after_write_every, nth) {
        let failure = ApiFailure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            "internal error after processing",
        );
        return failure.into_response();
    }
    response
}

fn jitter(max: std::time::Duration) -> std::time::Duration {
    if max.is_zero() {
        return max;
    }
    let micros = rand::rng().random_range(0..=max.as_micros() as u64);
    std::time::Duration::from_micros(micros)
}

/// A response whose body fails at once: the server closes the connection, so the client sees
/// its request vanish without a complete answer.
fn lost_response() -> Response {
    let failing = futures_util::stream::once(async {
        Err::<axum::body::Bytes, _>(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "response dropped by fault injection",
        ))
    });
    Response::new(Body::from_stream(failing))
}

//! Idempotency keys as many payment-style APIs require them (`--require-idempotency-key`):
//! subscriptions and claims must carry `Idempotency-Key`; a repeat of a key replays the
//! answer the first request got (marked `Idempotent-Replayed: true`) without doing the write
//! again, and a key reused for another request is refused. Only successful answers are kept,
//! in a bounded table, so a long-lived sandbox's memory stays flat.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::shared::Shared;
use crate::validate::ApiFailure;
use keys::Kept;

pub(crate) mod keys;

pub const HEADER: &str = "idempotency-key";
const MAX_BODY: usize = 1024 * 1024;
/// Characters of a key (as Stripe's): keys are kept, so their length is bounded.
pub const MAX_KEY_LEN: usize = 255;

/// Subscriptions and claims: the writes this variant holds to a key.
fn needs_key(method: &Method, path: &str) -> bool {
    *method == Method::POST && (path.ends_with("/subscriptions") || path.ends_with("/claims"))
}

pub async fn enforce(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if !shared.options.require_idempotency_key || !needs_key(request.method(), request.uri().path())
    {
        return next.run(request).await;
    }
    let Some(key) = request
        .headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.trim().is_empty())
        .map(str::to_string)
    else {
        return ApiFailure::new(
            StatusCode::BAD_REQUEST,
            "IDEMPOTENCY_KEY_REQUIRED",
            "this staging requires an Idempotency-Key header on subscriptions and claims",
        )
        .into_response();
    };
    if key.len() > MAX_KEY_LEN {
        return ApiFailure::new(
            StatusCode::BAD_REQUEST,
            "IDEMPOTENCY_KEY_TOO_LONG",
            format!("an Idempotency-Key is at most {MAX_KEY_LEN} characters"),
        )
        .into_response();
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_BODY).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let digest: [u8; 32] = Sha256::new()
        .chain_update(parts.uri.path().as_bytes())
        .chain_update(&bytes)
        .finalize()
        .into();
    if let Some(replayed) = shared.keys.replay(&key, &digest) {
        return replayed.unwrap_or_else(IntoResponse::into_response);
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if !response.status().is_success() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let body = to_bytes(body, MAX_BODY).await.unwrap_or_default();
    shared.keys.keep(
        key,
        Kept {
            request: digest,
            status: parts.status,
            headers: parts.headers.clone(),
            body: body.clone(),
        },
    );
    Response::from_parts(parts, Body::from(body))
}

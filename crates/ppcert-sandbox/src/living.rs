//! Behaviours of a staging that lives behind a gateway, each an option: a new booking's
//! contracts listed only after a delay (`contracts_delay`), and updates that need `If-Match`
//! with the `ETag` of the contracts read (`require_if_match`).

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::shared::Shared;
use crate::store::Store;
use crate::validate::ApiFailure;

/// The booking's contracts are not listed yet: its subscription is younger than the delay.
pub(crate) fn contracts_hidden(
    shared: &Shared,
    store: &Store,
    bn: &str,
    now: DateTime<Utc>,
) -> bool {
    let Some(delay) = shared.options.contracts_delay else {
        return false;
    };
    let delay = chrono::Duration::from_std(delay).unwrap_or(chrono::Duration::MAX);
    store.subscribed_at(bn).is_some_and(|at| now < at + delay)
}

/// A subscription or update answer names no contract while the contracts are not listed.
pub(crate) fn without_contracts(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.remove("contracts");
    }
    value
}

/// With `require_if_match`, an update must carry the booking's current `ETag`.
pub(crate) fn check_if_match(
    shared: &Shared,
    store: &Store,
    bn: &str,
    headers: &HeaderMap,
) -> Result<(), ApiFailure> {
    if !shared.options.require_if_match {
        return Ok(());
    }
    let current = store.etag(bn).unwrap_or_default();
    match headers
        .get(header::IF_MATCH)
        .map(|v| v.to_str().unwrap_or(""))
    {
        None => Err(ApiFailure::new(
            StatusCode::PRECONDITION_REQUIRED,
            "PRECONDITION_REQUIRED",
            "an update needs If-Match with the ETag of the booking's contracts read",
        )),
        Some(given)
            if given
                .split(',')
                .any(|tag| tag.trim() == current || tag.trim() == "*") =>
        {
            Ok(())
        }
        Some(given) => Err(ApiFailure::new(
            StatusCode::PRECONDITION_FAILED,
            "PRECONDITION_FAILED",
            format!("If-Match {given} is stale: the booking changed since it was read"),
        )),
    }
}

/// The `ETag` a contracts read carries when updates need `If-Match`.
pub(crate) fn etag(shared: &Shared, store: &Store, bn: &str) -> Option<HeaderValue> {
    if !shared.options.require_if_match {
        return None;
    }
    store.etag(bn).and_then(|t| HeaderValue::from_str(&t).ok())
}

/// The answer with the `ETag`, if there is one.
pub(crate) fn tagged(mut response: Response, etag: Option<HeaderValue>) -> Response {
    if let Some(tag) = etag {
        response.headers_mut().insert(header::ETAG, tag);
    }
    response
}

//! Subscriptions made asynchronously, as some stagings do: with `subscription_operations`,
//! `POST /subscriptions` checks the request, then answers `202 Accepted` with the `Location` of
//! an operation resource (`GET /operations/{id}`). The operation reads `running` for the
//! configured time; the first read after it makes the subscription and reads `succeeded`,
//! carrying the subscription's answer (or `failed`, with the error, when the store refused it
//! or `failed_operations_every` says so). A subscription is counted only when its operation is
//! read as succeeded: an operation no client reads confirms nothing.

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;

pub(crate) mod started;

use crate::models::SubscriptionRequest;
use crate::options::SubscriptionOperations;
use crate::shared::Shared;
use crate::validate::ApiFailure;
use started::Record;

/// `202 Accepted` for a checked subscription, naming its operation.
pub(crate) fn accepted(
    shared: &Shared,
    request: SubscriptionRequest,
    settings: SubscriptionOperations,
) -> Response {
    let id = shared.operations.start(request, settings);
    let location = format!("{}/operations/{id}", shared.options.api_prefix());
    let body = json!({"data": {"type": "operations", "id": id, "status": "running"}});
    (
        StatusCode::ACCEPTED,
        [(header::LOCATION, location)],
        axum::Json(body),
    )
        .into_response()
}

/// `GET /operations/{id}`: `running` until decided, then `succeeded` or `failed`.
pub(crate) async fn read(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    let running_for =
        (shared.options.subscription_operations).map_or(Duration::ZERO, |s| s.running_for);
    let mut started = shared.operations.lock();
    let Some(record) = started.1.get_mut(&id) else {
        let message = format!("no operation with id `{id}`");
        return Err(ApiFailure::new(StatusCode::NOT_FOUND, "NOT_FOUND", message));
    };
    if record.outcome.is_none() && record.began.elapsed() >= running_for {
        record.outcome = Some(decide(&shared, record));
    }
    let body = match &record.outcome {
        None => json!({"type": "operations", "id": id, "status": "running"}),
        Some(Ok(subscription)) => {
            json!({"type": "operations", "id": id, "status": "succeeded", "subscription": subscription})
        }
        Some(Err(error)) => {
            json!({"type": "operations", "id": id, "status": "failed", "error": error})
        }
    };
    Ok((StatusCode::OK, axum::Json(json!({ "data": body }))).into_response())
}

/// Carries out the operation's subscription (or fails it), once.
fn decide(shared: &Shared, record: &mut Record) -> Result<Value, Value> {
    let request = record
        .request
        .take()
        .ok_or_else(|| json!({"code": "GONE"}))?;
    if record.fails {
        return Err(
            json!({"code": "OPERATION_FAILED", "message": "the staging could not complete the subscription"}),
        );
    }
    let now = shared.now();
    shared
        .change(|store| store.subscribe(request, now))
        .map_err(|failure| json!({"code": failure.code, "message": failure.message}))
}

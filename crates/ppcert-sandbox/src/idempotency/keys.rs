//! The answers kept per idempotency key, bounded: the oldest key is forgotten first.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::validate::ApiFailure;

/// Keys remembered at most; the oldest are forgotten first.
const REMEMBERED: usize = 10_000;

pub(super) struct Kept {
    pub(super) request: [u8; 32],
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: Bytes,
}

#[derive(Default)]
pub struct Keys {
    kept: Mutex<(HashMap<String, Kept>, VecDeque<String>)>,
}

impl Keys {
    pub(super) fn replay(
        &self,
        key: &str,
        request: &[u8; 32],
    ) -> Option<Result<Response, ApiFailure>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let found = kept.0.get(key)?;
        if &found.request != request {
            return Some(Err(ApiFailure::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "IDEMPOTENCY_KEY_REUSED",
                "this Idempotency-Key was used for another request",
            )));
        }
        let mut response =
            (found.status, found.headers.clone(), found.body.clone()).into_response();
        response
            .headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
        Some(Ok(response))
    }

    /// Keys remembered.
    pub(crate) fn len(&self) -> usize {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).1.len()
    }

    pub(super) fn keep(&self, key: String, kept: Kept) {
        let mut guard = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let (table, order) = &mut *guard;
        if table.insert(key.clone(), kept).is_none() {
            order.push_back(key);
        }
        while order.len() > REMEMBERED {
            if let Some(old) = order.pop_front() {
                table.remove(&old);
            }
        }
    }
}

//! Which call a fault takes, and the answers the proxy gives in place of the staging's: a 429
//! or 503 of its own, or a connection dropped before the answer.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::models::Operation;
use crate::record::fault::{FaultKind, FaultRule, InjectedFault};
use crate::sandbox::validate::ApiFailure;

/// The session's plan and how many calls of each operation came so far.
pub(crate) struct Faults {
    rules: Vec<FaultRule>,
    calls: Mutex<HashMap<Operation, u32>>,
    /// Webhook deliveries, by the operation whose event they carry: counted apart from calls.
    deliveries: Mutex<HashMap<Operation, u32>>,
}

/// A fault the plan takes for this call: its rule, the call's number and what to do.
pub(crate) struct Armed {
    pub rule: usize,
    pub call: u32,
    pub kind: FaultKind,
}

impl Faults {
    pub(crate) fn new(rules: Vec<FaultRule>) -> Faults {
        Faults {
            rules,
            calls: Mutex::new(HashMap::new()),
            deliveries: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a call of `op`: the first rule that takes it, if any. A call no rule names is
    /// never touched.
    pub(crate) fn arm(&self, op: Operation) -> Option<Armed> {
        self.take(op, &self.calls, false)
    }

    /// Counts a webhook delivery carrying `op`'s event: the `duplicate_webhook` rule that
    /// takes it, if any.
    pub(crate) fn arm_delivery(&self, op: Operation) -> Option<Armed> {
        self.take(op, &self.deliveries, true)
    }

    fn take(
        &self,
        op: Operation,
        counts: &Mutex<HashMap<Operation, u32>>,
        webhook: bool,
    ) -> Option<Armed> {
        let call = {
            let mut counts = counts.lock().unwrap_or_else(|e| e.into_inner());
            let n = counts.entry(op).or_default();
            *n = n.saturating_add(1);
            *n
        };
        let (rule, found) = (self.rules.iter().enumerate()).find(|(_, rule)| {
            rule.operation == op
                && (rule.kind == FaultKind::DuplicateWebhook) == webhook
                && rule.which.takes(call)
        })?;
        Some(Armed {
            rule,
            call,
            kind: found.kind.clone(),
        })
    }
}

/// The request's `Idempotency-Key`, if it sent one.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("idempotency-key")?.to_str().ok()?;
    Some(value.chars().take(200).collect())
}

/// The proxy's own 429 (with `Retry-After`, whole seconds rounded up) or 503.
pub(crate) fn status_answer(status: u16, retry_after_ms: Option<u64>) -> Response {
    let (code, text) = match status {
        429 => (StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED"),
        _ => (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE"),
    };
    let mut response = ApiFailure::new(
        code,
        text,
        "fault injected by ppcert proxy --faults: not forwarded, nothing written",
    )
    .into_response();
    if let Some(ms) = retry_after_ms {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(ms.div_ceil(1000)));
    }
    response
}

/// An answer whose body fails at once: the connection is closed before the client reads it.
pub(crate) fn dropped() -> Response {
    let failing = futures_util::stream::once(async {
        Err::<axum::body::Bytes, _>(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "answer dropped by ppcert proxy --faults",
        ))
    });
    let mut response = Response::new(Body::from_stream(failing));
    response
        .extensions_mut()
        .insert(crate::sandbox::listener::Relayed);
    response
}

/// The console's line for a fault as it is injected.
pub(crate) fn said(fault: &InjectedFault, what: &str) -> String {
    use crate::console::printable;
    format!(
        "fault injected: {} on {} call {} ({} {}{}): {what}",
        fault.kind.describe(),
        fault.operation,
        fault.call,
        fault.method,
        printable(&fault.path),
        fault
            .booking_number
            .as_deref()
            .map(|b| format!(", booking {}", printable(b)))
            .unwrap_or_default(),
    )
}

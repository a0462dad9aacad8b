//! Faults `ppcert proxy --faults` injects into a partner's traffic, as the journal records
//! them: the plan's rules (one line when the session starts) and each fault as injected (a
//! line of its own), so `verify` grades the partner's reaction again from the journal alone.

use serde::{Deserialize, Serialize};

use crate::models::Operation;
use crate::timestamp::Timestamp;

/// What the proxy does to the call instead of relaying it as it came.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum FaultKind {
    /// Answered 429 (with `Retry-After`) or 503 by the proxy: not forwarded, nothing written.
    Status {
        status: u16,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
    },
    /// Forwarded and taken by the staging, then the connection dropped before the answer.
    LostAnswer,
    /// Forwarded, and the answer held this long before it is given.
    Delay { for_ms: u64 },
    /// A staging webhook delivery (the operation's event: `contract.created` for
    /// `subscription`, `claim.updated` for `claim`) passed on to the partner's receiver twice,
    /// same body, same signature headers.
    DuplicateWebhook,
}

impl FaultKind {
    /// As the report and the console say it: `status 429 (Retry-After 1 s)`.
    pub(crate) fn describe(&self) -> String {
        match self {
            FaultKind::Status {
                status,
                retry_after_ms: Some(ms),
            } => format!("status {status} (Retry-After {})", seconds(*ms)),
            FaultKind::Status { status, .. } => format!("status {status}"),
            FaultKind::LostAnswer => "lost answer".into(),
            FaultKind::Delay { for_ms } => format!("delay {}", seconds(*for_ms)),
            FaultKind::DuplicateWebhook => "duplicate webhook".into(),
        }
    }
}

/// Milliseconds as the report says them: `1 s`, `0.25 s`.
pub(crate) fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.2} s", ms as f64 / 1000.0)
    }
}

/// Which calls of the operation a rule takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Which {
    /// The Nth call only.
    Nth(u32),
    /// Every Nth call.
    Every(u32),
}

impl Which {
    pub(crate) fn takes(self, call: u32) -> bool {
        match self {
            Which::Nth(n) => call == n,
            Which::Every(n) => n > 0 && call.is_multiple_of(n),
        }
    }
}

/// One rule of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FaultRule {
    pub operation: Operation,
    #[serde(flatten)]
    pub kind: FaultKind,
    #[serde(flatten)]
    pub which: Which,
}

/// One fault as injected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct InjectedFault {
    /// The plan's rule it follows (0-based).
    pub rule: usize,
    /// Which call of the operation it was (1-based, counted through the proxy).
    pub call: u32,
    pub operation: Operation,
    #[serde(flatten)]
    pub kind: FaultKind,
    /// When the partner's request came (the exchange's `started_at` where one is recorded).
    pub at: Timestamp,
    pub method: String,
    /// Its path, without the query.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking_number: Option<String>,
    /// The request's `Idempotency-Key`, if it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// What the staging answered, for a fault on a forwarded call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_status: Option<u16>,
}

/// A staging webhook delivery `ppcert proxy --webhook-forward` passed on to the partner's
/// receiver, and its answer: a journal line of its own, so `verify` grades a duplicate again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RelayedWebhook {
    pub at: Timestamp,
    /// The envelope's `event` (`contract.created`, `claim.updated`), as the staging sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking_number: Option<String>,
    /// The receiver's status; absent when it did not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The second delivery of a `duplicate_webhook` fault.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub duplicate: bool,
}

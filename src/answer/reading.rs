//! Reading values from answers: the configured capture for a value when there is one, else
//! the built-in tolerant reading (one table of them, shared by `run` and `probe`).

use serde_json::{Value, json};

use super::tolerant;
use crate::endpoints::{AnswerView, Endpoints, RenderError};
use crate::models::Operation;
use crate::record::Check;

/// Whether the flow cannot go on without the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    Required,
    Optional,
}

/// A built-in reading: the value and the JSONPath (or description) it was found at.
pub(crate) type Found = Option<(Value, String)>;

/// What one reading gave: the value if any, where it came from, and whether a capture said so.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reading {
    pub value: Option<Value>,
    pub from: String,
    pub configured: bool,
}

/// An id, a reference or a status as text: strings and numbers both give one.
pub(crate) fn as_text(value: &Value) -> Option<String> {
    match value {
        // A blank status (`"  "`) is no status, as an empty one is not.
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The size of `value` as it would be sent and recorded, when it is past
/// [`CAPTURED_VALUE_BYTES`](crate::bounds::CAPTURED_VALUE_BYTES): such a value is not kept.
pub(crate) fn oversize(value: &Value) -> Option<usize> {
    let size = match value {
        Value::String(s) => s.len(),
        Value::Null | Value::Bool(_) | Value::Number(_) => return None,
        other => other.to_string().len(),
    };
    (size > crate::bounds::CAPTURED_VALUE_BYTES).then_some(size)
}

/// What a step says of a value past the bound: a failed check of its own, named like the
/// reading's.
pub(crate) fn oversize_check(name: &str, op: Operation, from: &str, size: usize) -> Check {
    Check::fail(
        &format!("read_{name}"),
        format!(
            "`{name}` read from the {op} answer ({from}) is {size} bytes, larger than {} KiB, \
             ppcert's bound for a value read from an answer; it is not kept or sent on",
            crate::bounds::CAPTURED_VALUE_BYTES >> 10
        ),
    )
}

/// The built-in reading of each capturable value (`product_type` for contract values).
pub(crate) fn builtin(op: Operation, name: &str, product_type: &str, body: &Value) -> Found {
    match (op, name) {
        (Operation::Quote, "id") | (Operation::Claim, "claim_id") => tolerant::field(body, "id"),
        (Operation::Quote, "reference") => tolerant::field(body, "reference"),
        (Operation::Quote | Operation::Update, "price_delta") => {
            tolerant::field(body, "priceDelta")
        }
        (Operation::ReadContracts, "contract_id") => {
            first_contract(body, product_type).and_then(|(c, at)| {
                tolerant::contract_id(c).map(|(id, f)| (json!(id), format!("{f} of the {at}")))
            })
        }
        (Operation::ReadContracts, "claim_status") => {
            first_contract(body, product_type).and_then(|(c, at)| {
                tolerant::claim_status(c).map(|s| (json!(s), format!("claim status of the {at}")))
            })
        }
        (Operation::Claim, "claim_status") => tolerant::field(body, "status").or_else(|| {
            let (payload, _) = tolerant::payload(body);
            tolerant::claim_status(payload).map(|s| (json!(s), "claim.status".into()))
        }),
        _ => None,
    }
}

/// The first contract of `product_type` wherever the body holds it, and how it was found.
pub(crate) fn first_contract<'a>(
    body: &'a Value,
    product_type: &str,
) -> Option<(&'a Value, String)> {
    let (found, how) = tolerant::contracts(body, product_type);
    found
        .first()
        .map(|c| (*c, format!("first {product_type} contract ({how})")))
}

/// Reads `name` from `body`: the capture configured for it, else `fallback`.
pub(crate) fn read(
    endpoints: &Endpoints,
    op: Operation,
    name: &str,
    context: &Value,
    answer: AnswerView<'_>,
    fallback: impl FnOnce(&Value) -> Found,
) -> Result<Reading, RenderError> {
    match endpoints.capture(op, name, context, answer) {
        Some(Ok(captured)) => Ok(Reading {
            value: captured.value,
            from: captured.path,
            configured: true,
        }),
        Some(Err(error)) => Err(error),
        None => Ok(match fallback(answer.body) {
            Some((value, path)) => Reading {
                value: Some(value),
                from: format!("built-in: {path}"),
                configured: false,
            },
            None => Reading {
                value: None,
                from: "built-in".into(),
                configured: false,
            },
        }),
    }
}

/// The claim status of the claimed contract, found by its id among the booking's contracts.
pub(crate) fn claimed_contract_status(
    body: &serde_json::Value,
    product_type: &str,
    contract: &str,
) -> Found {
    let (payload, _) = tolerant::payload(body);
    let (found, how) = tolerant::contracts(payload, product_type);
    found
        .iter()
        .find(|c| tolerant::contract_id(c).is_some_and(|(id, _)| id == contract))
        .and_then(|c| tolerant::claim_status(c))
        .map(|s| {
            (
                json!(s),
                format!("{product_type} contract {contract} ({how}) claim status"),
            )
        })
}

//! Reading values from answers: the configured capture for a value when there is one, else
//! the built-in tolerant reading. Every value read is recorded with where it came from, and a
//! value that could not be read is a named failure (the call itself still counted).

use serde_json::{Value, json};

use super::call::Pending;
use super::endpoints::Endpoints;
use super::flow::FlowRunner;
use super::tolerant;
use crate::models::Operation;
use crate::record::{Check, ValueRead};

/// Whether the flow cannot go on without the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Required,
    Optional,
}

/// A built-in reading: the value and the JSONPath (or description) it was found at.
pub type Found = Option<(Value, String)>;

/// What one reading gave: the value if any, where it came from, and whether a capture said so.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub value: Option<Value>,
    pub from: String,
    pub configured: bool,
}

/// An id, a reference or a status as text: strings and numbers both give one.
pub fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The built-in reading of each capturable value (`product_type` for contract values).
pub fn builtin(op: Operation, name: &str, product_type: &str, body: &Value) -> Found {
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
pub fn first_contract<'a>(body: &'a Value, product_type: &str) -> Option<(&'a Value, String)> {
    let (found, how) = tolerant::contracts(body, product_type);
    found
        .first()
        .map(|c| (*c, format!("first {product_type} contract ({how})")))
}

/// Reads `name` from `body`: the capture configured for it, else `fallback`.
pub fn read(
    endpoints: &Endpoints,
    op: Operation,
    name: &str,
    context: &Value,
    body: &Value,
    fallback: impl FnOnce(&Value) -> Found,
) -> Result<Reading, String> {
    match endpoints.capture(op, name, context, body) {
        Some(Ok(captured)) => Ok(Reading {
            value: captured.value,
            from: captured.path,
            configured: true,
        }),
        Some(Err(error)) => Err(error),
        None => Ok(match fallback(body) {
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

impl FlowRunner<'_> {
    /// Reads `name` from the answer pending: the capture configured for it, else `fallback`.
    /// `None` when the status was not a success.
    pub fn read_value(
        &self,
        pending: &mut Pending,
        name: &str,
        context: &Value,
        need: Need,
        fallback: impl FnOnce(&Value) -> Found,
    ) -> Option<Value> {
        let body = pending.success_body()?;
        let op = pending.spec.operation;
        let reading = match read(&self.shared.endpoints, op, name, context, &body, fallback) {
            Ok(reading) => reading,
            Err(error) => {
                pending
                    .checks
                    .push(Check::fail(&format!("read_{name}"), error));
                return None;
            }
        };
        let text = reading
            .value
            .as_ref()
            .and_then(|v| as_text(v).or_else(|| Some(v.to_string())));
        if reading.value.is_some() || reading.configured || need == Need::Required {
            pending.reads.push(ValueRead {
                name: name.to_string(),
                value: text,
                from: reading.from.clone(),
            });
        }
        // A capture says where a value is when the answer has it: an optional value that is
        // absent (no priceDelta on a first quote) is no failure.
        if reading.value.is_none() && need == Need::Required {
            let how = if reading.configured {
                format!("with `{}`", reading.from)
            } else {
                format!(
                    "with the built-in reading (set `[endpoints.{op}.capture] {name} = \"$...\"` \
                     in ppcert.toml to say where it is, or let `ppcert probe` find it)"
                )
            };
            let answer = pending
                .attempt
                .response
                .as_ref()
                .map(|r| r.describe())
                .unwrap_or_default();
            pending.checks.push(Check::fail(
                &format!("read_{name}"),
                format!("could not read `{name}` from the {op} answer {how}; {answer}"),
            ));
        }
        reading.value
    }

    /// [`FlowRunner::read_value`] with the built-in reading of the value.
    pub fn read_builtin(
        &self,
        pending: &mut Pending,
        name: &str,
        context: &Value,
        need: Need,
    ) -> Option<Value> {
        let op = pending.spec.operation;
        let product_type = context["product_type"].as_str().unwrap_or("").to_string();
        self.read_value(pending, name, context, need, |body| {
            builtin(op, name, &product_type, body)
        })
    }
}

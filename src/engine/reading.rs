//! Reading values from answers: the configured capture for a value when there is one, else
//! the built-in tolerant reading. Every value read is recorded with where it came from, and a
//! value that could not be read is a named failure (the call itself still counted).

use serde_json::Value;

use super::call::Pending;
use super::flow::FlowRunner;
use crate::record::{Check, ValueRead};

/// Whether the flow cannot go on without the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Required,
    Optional,
}

/// A built-in reading: the value and the JSONPath it was found at.
pub type Found = Option<(Value, String)>;

/// An id, a reference or a status as text: strings and numbers both give one.
pub fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl FlowRunner<'_> {
    /// Reads `name` from the answer pending: the capture configured for it, else `builtin`
    /// (which says where it looked in `looked`). `None` when the status was not a success.
    pub fn read_value(
        &self,
        pending: &mut Pending,
        name: &str,
        context: &Value,
        need: Need,
        builtin: impl FnOnce(&Value) -> Found,
    ) -> Option<Value> {
        let body = pending.success_body()?;
        let op = pending.spec.operation;
        let (found, from, configured) =
            match self.shared.endpoints.capture(op, name, context, &body) {
                Some(Ok(captured)) => (captured.value, captured.path, true),
                Some(Err(error)) => {
                    pending
                        .checks
                        .push(Check::fail(&format!("read_{name}"), error));
                    return None;
                }
                None => match builtin(&body) {
                    Some((value, path)) => (Some(value), format!("built-in: {path}"), false),
                    None => (None, "built-in".to_string(), false),
                },
            };
        let text = found
            .as_ref()
            .and_then(|v| as_text(v).or_else(|| Some(v.to_string())));
        if found.is_some() || configured || need == Need::Required {
            pending.reads.push(ValueRead {
                name: name.to_string(),
                value: text,
                from: from.clone(),
            });
        }
        // A capture says where a value is when the answer has it: an optional value that is
        // absent (no priceDelta on a first quote) is no failure.
        if found.is_none() && need == Need::Required {
            let how = if configured {
                format!("with `{from}`")
            } else {
                format!(
                    "with the built-in reading (set `[endpoints.{op}.capture] {name} = \"$...\"` \
                     in ppcert.toml to say where it is)"
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
        found
    }
}

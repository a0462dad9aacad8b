//! A step reads what it needs from its answer: every value read is recorded with where it came
//! from, and a value that could not be read is a named failure (the call itself still counted).

use serde_json::Value;

use super::context::StepContext;
use crate::answer::reading::{
    Found, Need, Reading, as_text, builtin, oversize, oversize_check, read,
};
use crate::endpoints::AnswerView;
use crate::engine::caller::Pending;
use crate::models::Operation;
use crate::record::{Check, ValueRead};

/// A value past the bound is refused: a failed check, recorded as read from where it was but
/// without the value.
fn refused_oversize(
    pending: &mut Pending,
    name: &str,
    reading: &crate::answer::reading::Reading,
) -> bool {
    let Some(size) = reading.value.as_ref().and_then(oversize) else {
        return false;
    };
    let op = pending.spec.operation;
    pending
        .checks
        .push(oversize_check(name, op, &reading.from, size));
    pending.reads.push(ValueRead {
        name: name.to_string(),
        value: None,
        from: reading.from.clone(),
    });
    true
}

impl StepContext<'_> {
    /// Reads `name` from the answer pending: the capture configured for it, else `fallback`.
    /// `None` when the status was not a success.
    pub(crate) fn read_value(
        &self,
        pending: &mut Pending,
        name: &str,
        context: &Value,
        need: Need,
        fallback: impl FnOnce(&Value) -> Found,
    ) -> Option<Value> {
        let body = pending.success_body()?;
        let op = pending.spec.operation;
        let headers = (pending.attempt.response.as_ref())
            .map(|r| r.headers.clone())
            .unwrap_or_default();
        let answer = AnswerView {
            body: &body,
            headers: &headers,
        };
        let confirmed = self.confirm_reading(pending.confirms, name, context, answer);
        let read = || read(&self.shared.endpoints, op, name, context, answer, fallback);
        let reading = match confirmed.unwrap_or_else(read) {
            Ok(reading) => reading,
            Err(error) => {
                pending
                    .checks
                    .push(Check::fail(&format!("read_{name}"), error.to_string()));
                return None;
            }
        };
        if refused_oversize(pending, name, &reading) {
            return None;
        }
        let text = reading
            .value
            .as_ref()
            .and_then(|v| as_text(v).or_else(|| Some(v.to_string())));
        if let Some(value) = &reading.value {
            let kept = (name.to_string(), value.clone(), reading.from.clone());
            pending.captured.push(kept);
        }
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

    /// A confirming answer is read with its write's confirm table first (`confirms`: the
    /// write it confirms); `None` when that table has no capture of `name`.
    fn confirm_reading(
        &self,
        confirms: Option<crate::models::Operation>,
        name: &str,
        context: &Value,
        answer: AnswerView<'_>,
    ) -> Option<Result<Reading, crate::endpoints::RenderError>> {
        let endpoints = &self.shared.endpoints;
        let found = endpoints.confirm_capture(confirms?, name, context, answer)?;
        Some(found.map(|captured| Reading {
            value: captured.value,
            from: format!("confirm: {}", captured.path),
            configured: true,
        }))
    }

    /// [`StepContext::read_value`] with the built-in reading of the value.
    pub(crate) fn read_builtin(
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

    /// Whether a contracts answer lists a contract of each of `product_types`, read as the
    /// step will read it: with a configured `contract_id` capture, else the built-in reading.
    pub(crate) fn lists_contracts(&self, pending: &Pending, product_types: &[String]) -> bool {
        let Some(body) = pending.success_body() else {
            return false;
        };
        let empty = Default::default();
        let headers = (pending.attempt.response.as_ref()).map_or(&empty, |r| &r.headers);
        let answer = AnswerView {
            body: &body,
            headers,
        };
        let op = Operation::ReadContracts;
        product_types.iter().all(|t| {
            let mut context = pending.spec.context.clone();
            context["product_type"] = Value::String(t.clone());
            let builtin = |body: &Value| builtin(op, "contract_id", t, body);
            let endpoints = &self.shared.endpoints;
            read(endpoints, op, "contract_id", &context, answer, builtin)
                .is_ok_and(|read| read.value.is_some())
        })
    }
}

//! Values kept from answers. Every answer's values (built-in readings and the user's own
//! captures) go into the flow's `captured`, with the step and place they came from; a wait's
//! condition (`wait.rs`) is evaluated over the context as it would be after the answer.

use serde_json::Value;

use super::context::StepContext;
use crate::answer::reading::{self, as_text};
use crate::endpoints::AnswerView;
use crate::engine::caller::Pending;
use crate::record::CapturedValue;
use crate::record::ValueRead;

impl StepContext<'_> {
    /// The call's context with `captured` as it would be after this answer.
    pub(crate) fn answer_context(&self, pending: &Pending) -> Value {
        let mut context = pending.spec.context.clone();
        let mut captured = self.state.captured_values();
        for (name, value, _) in self.answer_values(pending, true) {
            if reading::oversize(&value).is_some() {
                continue;
            }
            captured[name] = value;
        }
        context["captured"] = captured;
        context
    }

    /// The values the answer gives: every name its operation may capture (`builtin`), or only
    /// the user's own captures; what cannot be read is left out.
    fn answer_values(&self, pending: &Pending, builtin: bool) -> Vec<(String, Value, String)> {
        let op = pending.spec.operation;
        let endpoints = &self.shared.endpoints;
        let names = if builtin {
            endpoints.may_capture(op)
        } else {
            endpoints.named_captures(op)
        };
        // Most calls have no capture of the user's own: their answer is not parsed again.
        let Some(body) = (!names.is_empty())
            .then(|| pending.success_body())
            .flatten()
        else {
            return Vec::new();
        };
        let empty = Default::default();
        let headers = (pending.attempt.response.as_ref()).map_or(&empty, |r| &r.headers);
        let answer = AnswerView {
            body: &body,
            headers,
        };
        let context = &pending.spec.context;
        let product_type = context["product_type"].as_str().unwrap_or("").to_string();
        let fallback_for = |name: &str| {
            let name = name.to_string();
            let product_type = product_type.clone();
            move |body: &Value| reading::builtin(op, &name, &product_type, body)
        };
        names
            .into_iter()
            .filter_map(|name| {
                let read =
                    reading::read(endpoints, op, &name, context, answer, fallback_for(&name));
                let read = read.ok()?;
                Some((name, read.value?, read.from))
            })
            .collect()
    }

    /// Keeps what the answer gave in the flow's `captured`: the built-in values the step read
    /// and every capture of the user's own, each recorded on the exchange.
    pub(crate) fn keep_captured(&mut self, pending: &mut Pending) {
        if pending.poll {
            return;
        }
        for (name, value, from) in self.answer_values(pending, false) {
            if let Some(size) = reading::oversize(&value) {
                let op = pending.spec.operation;
                let check = reading::oversize_check(&name, op, &from, size);
                pending.checks.push(check);
                pending.reads.push(ValueRead {
                    name,
                    value: None,
                    from,
                });
                continue;
            }
            pending.reads.push(ValueRead {
                name: name.clone(),
                value: as_text(&value).or_else(|| Some(value.to_string())),
                from: from.clone(),
            });
            pending.captured.push((name, value, from));
        }
        let step = format!("{}:{}", self.step_index + 1, self.step_name);
        for (name, value, from) in pending.captured.drain(..) {
            let step = step.clone();
            self.state
                .captured
                .insert(name, CapturedValue { value, step, from });
        }
    }
}

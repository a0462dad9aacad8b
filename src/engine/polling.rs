//! Values kept from answers and waits over them. Every answer's values (built-in readings and
//! the user's own captures) go into the flow's `captured`, with the step and place they came
//! from; a call whose endpoint has `[endpoints.NAME.wait]` is repeated until its condition
//! holds over the context after the answer. Each unmet poll is recorded as an exchange that
//! never counts; the answer that meets the condition is the call's own.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::caller::{CallSpec, Expect, Pending};
use super::reading::{self, as_text};
use super::step_context::StepContext;
use crate::endpoints::AnswerView;
use crate::models::Operation;
use crate::record::CapturedValue;
use crate::record::{Check, ValueRead};

/// How long the built-in contracts read waits for a new booking's contract to be listed
/// when the subscription's answer did not carry its id (docs/flows.md states the bound).
pub(crate) const CONTRACTS_WAIT: Duration = Duration::from_secs(10);
/// How often it asks meanwhile.
pub(crate) const CONTRACTS_EVERY: Duration = Duration::from_millis(500);

/// What a poll waits for, in words for the evidence, and how often and how long.
pub(super) struct Poll {
    pub condition: String,
    pub every: Duration,
    pub timeout: Duration,
    /// A timeout fails the call (a configured wait); the built-in wait leaves the failure to
    /// the reading that needed the value.
    pub fail_on_timeout: bool,
}

impl StepContext<'_> {
    /// Sends the call. A write is sent once (again only to reconcile a lost answer) and
    /// confirmed when its answer says it is pending (`confirm.rs`); a read is repeated until
    /// the endpoint's wait holds, when it has one.
    pub(super) async fn send(&mut self, spec: CallSpec) -> Pending {
        let wait = match spec.expect {
            Expect::Success(_) if spec.operation.is_write() => {
                let pending = self.send_once(spec).await;
                return self.confirm_write(pending).await;
            }
            Expect::Success(_) => self.shared.endpoints.wait(spec.operation).cloned(),
            Expect::Refusal(_) => None,
        };
        let Some(wait) = wait else {
            return self.send_once(spec).await;
        };
        let poll = Poll {
            condition: format!("`{}`", wait.until),
            every: wait.every,
            timeout: wait.timeout,
            fail_on_timeout: true,
        };
        self.send_polling(spec, poll, |cx, pending| {
            let context = cx.answer_context(pending);
            cx.shared.endpoints.wait_holds(&wait, &context)
        })
        .await
    }

    /// Sends `spec` until `holds` says the answer is the one waited for, or the time is up.
    pub(super) async fn send_polling(
        &mut self,
        spec: CallSpec,
        poll: Poll,
        holds: impl Fn(&Self, &Pending) -> Result<bool, String>,
    ) -> Pending {
        // Only a read is repeated: a write sent again would be a second write.
        debug_assert!(!spec.operation.is_write(), "{} polled", spec.operation);
        let started = Instant::now();
        let mut polls = 0u32;
        loop {
            let mut pending = self.send_once(spec.clone()).await;
            if !pending.status_ok() || pending.replayed {
                return pending; // the step reports a failed call as any other
            }
            match holds(self, &pending) {
                Ok(true) => {
                    if polls > 0 {
                        let detail = format!("{} held after {polls} poll(s)", poll.condition);
                        pending.checks.push(Check::pass("wait", detail));
                    }
                    return pending;
                }
                Ok(false) => {}
                Err(error) => {
                    pending.checks.push(Check::fail("wait", error));
                    return pending;
                }
            }
            let announced = (pending.attempt.response.as_ref())
                .and_then(|r| super::waits::announced_wait(&r.headers));
            let pause = announced.map_or(poll.every, |a| a.max(poll.every));
            if started.elapsed() + pause > poll.timeout || self.shared.cancel.is_cancelled() {
                let answer = (pending.attempt.response.as_ref())
                    .map(|r| format!("HTTP {}: {}", r.status, r.describe()))
                    .unwrap_or_default();
                let detail = format!(
                    "{} still false after {} s ({polls} poll(s)); last answer {answer}",
                    poll.condition,
                    poll.timeout.as_secs_f32()
                );
                let check = Check::fail("wait", detail);
                pending.checks.push(if poll.fail_on_timeout {
                    check
                } else {
                    check.warning()
                });
                return pending;
            }
            polls += 1;
            pending.poll = true;
            let detail = format!("poll {polls}: {} not yet true", poll.condition);
            pending.checks.push(Check::pass("wait", detail));
            self.finish(pending);
            self.shared.cancel.sleep(pause).await;
        }
    }

    /// The call's context with `captured` as it would be after this answer.
    pub(super) fn answer_context(&self, pending: &Pending) -> Value {
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
    pub(super) fn keep_captured(&mut self, pending: &mut Pending) {
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

impl StepContext<'_> {
    /// Whether a contracts answer lists a contract of each of `product_types`, read as the
    /// step will read it: with a configured `contract_id` capture, else the built-in reading.
    pub(super) fn lists_contracts(&self, pending: &Pending, product_types: &[String]) -> bool {
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
            let builtin = |body: &Value| reading::builtin(op, "contract_id", t, body);
            let endpoints = &self.shared.endpoints;
            reading::read(endpoints, op, "contract_id", &context, answer, builtin)
                .is_ok_and(|read| read.value.is_some())
        })
    }
}

//! Confirmation, a write's own phase: a write answered `202 Accepted` (or whose endpoint has
//! an `[endpoints.WRITE.confirm]` read or condition) is recorded at once as `pending`, then read
//! until its outcome shows: by default a GET of its `Location` (else `Content-Location`) until
//! a success other than 202 whose status word, if any, is final. The reads are recorded as
//! confirmation exchanges that never count; the one that settles the write is handed to the
//! step, which reads the values it carries as it would a 201's. The write is never sent again.

use std::time::Instant;

use serde_json::Value;

use super::confirm_target::{Shown, Target, nowhere_named, taken_as_it_is};
use super::context::StepContext;
use crate::answer::reading::{self, as_text};
use crate::answer::tolerant;
use crate::endpoints::SuccessRule;
use crate::endpoints::confirm::ConfirmRead;
use crate::engine::caller::{CallSpec, Expect, Pending};
use crate::models::Operation;
use crate::record::phase::{CONFIRMED, UNCONFIRMED};
use crate::record::{Check, Phase};

/// Status words that say an operation is still under way.
const UNDER_WAY: [&str; 9] = [
    "PENDING",
    "RUNNING",
    "IN_PROGRESS",
    "PROCESSING",
    "QUEUED",
    "ACCEPTED",
    "SUBMITTED",
    "STARTED",
    "CREATED",
];
/// Status words that say an operation ended without doing what was asked.
const FAILED: [&str; 8] = [
    "FAILED",
    "FAILURE",
    "ERROR",
    "ERRORED",
    "REJECTED",
    "CANCELLED",
    "CANCELED",
    "DECLINED",
];

impl StepContext<'_> {
    /// Confirms a write's success answer when it needs it, and returns the answer the step
    /// reads: the write's own when nothing was to confirm, else the read that settled it (or
    /// the last read, failed, when none did).
    pub(crate) async fn confirm_write(&mut self, mut write: Pending) -> Pending {
        let op = write.spec.operation;
        let status = write.attempt.status();
        let configured = (self.shared.endpoints.confirm(op)).is_some_and(|c| c.reads());
        let needed = status == Some(202) || configured;
        if !op.is_write() || !needed || !write.status_ok() || write.reconciled() {
            return write;
        }
        let context = self.answer_context(&write);
        let target = match self.target(&write, &context) {
            // A 202 naming nowhere to read that is taken as it is (`confirm_target.rs`).
            Ok(None) => {
                write.checks.extend(taken_as_it_is(op));
                return write;
            }
            Ok(Some(target)) => target,
            Err(why) => {
                // Nowhere it may read: the write stays pending; the ledger counts it unconfirmed.
                write.phase = Phase::Pending;
                write.checks.push(Check::fail(UNCONFIRMED, why));
                return write;
            }
        };
        write.phase = Phase::Pending;
        let sent = read_headers(&write.spec.headers);
        let spec = match self.confirm_read(op, &target, &context, sent) {
            Ok(spec) => spec,
            Err(why) => {
                write.checks.push(Check::fail(UNCONFIRMED, why));
                return write;
            }
        };
        let (every, timeout) = self.shared.endpoints.confirm_bounds(op);
        write.checks.push(Check::pass(
            "pending",
            format!(
                "answered HTTP {}; counted once its outcome shows: {target} every {} ms for at \
                 most {} s",
                status.unwrap_or(0),
                every.as_millis(),
                timeout.as_secs_f32()
            ),
        ));
        self.finish(write);
        self.read_until_settled(op, &spec, &target, &context).await
    }

    /// Reads `spec` until the write's outcome shows, its time is up, or Ctrl-C: the read that
    /// settled it, else the last one with the check saying why not.
    async fn read_until_settled(
        &mut self,
        op: Operation,
        spec: &CallSpec,
        target: &Target,
        context: &Value,
    ) -> Pending {
        let (every, timeout) = self.shared.endpoints.confirm_bounds(op);
        let started = Instant::now();
        let mut reads = 0u32;
        loop {
            let (mut read, _) = self.caller.send(spec.clone(), self.booking_number()).await;
            read.phase = Phase::Confirm;
            read.confirms = Some(op);
            reads += 1;
            let shown = match target {
                Target::Contracts => self.contracts_listed(&read),
                _ => self.shown(op, &mut read, context),
            };
            let why = match shown {
                Shown::Confirmed(how) => {
                    read.checks.push(Check::pass(CONFIRMED, how));
                    read.view = read.attempt.response.as_ref().map(|r| r.json());
                    return read;
                }
                Shown::Failed(how) => {
                    read.checks.push(Check::fail(CONFIRMED, how));
                    return read;
                }
                Shown::NotYet(why) => why,
            };
            if started.elapsed() + every > timeout {
                read.checks.push(Check::fail(
                    UNCONFIRMED,
                    format!(
                        "the {op}'s outcome did not show in {} s ({reads} reads of {target}); \
                         last answer {}; an unconfirmed {op} does not count",
                        timeout.as_secs_f32(),
                        last_answer(&read)
                    ),
                ));
                return read;
            }
            read.poll = true;
            if !self.shared.cancel.sleep(every).await {
                // Not settled: the write stays pending in the journal, for `--resume`.
                let why = format!("interrupted before the {op}'s outcome showed ({why})");
                read.checks.push(Check::fail("confirm", why));
                return read;
            }
            let said = format!("read {reads}: {why}");
            read.checks.push(Check::pass("confirm", said));
            self.finish(read);
        }
    }

    /// What the confirmation reads: the table's `read`, else the answer's `Location` (else
    /// `Content-Location`). `None`: a 202 that names nowhere to read and no `read` configured.
    fn target(&self, write: &Pending, context: &Value) -> Result<Option<Target>, String> {
        let op = write.spec.operation;
        let read = self
            .shared
            .endpoints
            .confirm(op)
            .and_then(|c| c.read.clone());
        let location = match read {
            Some(ConfirmRead::Endpoint(read)) => return Ok(Some(Target::Endpoint(read))),
            Some(ConfirmRead::Template) => {
                (self.shared.endpoints.confirm_read(op, context)).map_err(|e| e.to_string())?
            }
            None => {
                let headers = write.attempt.response.as_ref().map(|r| &r.headers);
                let header = |name| headers.and_then(|h| crate::record::header(h, name));
                match header("Location").or_else(|| header("Content-Location")) {
                    Some(location) => location.trim().to_string(),
                    None if write.attempt.status() == Some(202) => return nowhere_named(op),
                    None => {
                        return Err(format!(
                            "`[endpoints.{op}.confirm] until` is set but the answer names no \
                             Location to read: set `read` (an endpoint or a path)"
                        ));
                    }
                }
            }
        };
        self.same_origin(&write.attempt.url, &location).map(Some)
    }

    /// `location` resolved against the write's URL, refused when it leaves the target's
    /// origin: the token is sent only to the target.
    fn same_origin(&self, write_url: &str, location: &str) -> Result<Target, String> {
        let base = reqwest::Url::parse(write_url).map_err(|e| format!("{write_url}: {e}"))?;
        let url = base
            .join(location)
            .map_err(|e| format!("`{location}` is not a URL: {e}"))?;
        if url.origin() != base.origin() {
            return Err(format!(
                "its outcome is at {url}, outside the target's origin {}: ppcert sends its \
                 token only to the target",
                base.origin().ascii_serialization()
            ));
        }
        Ok(Target::At(url.to_string()))
    }

    /// One confirmation read's call, recorded under the write's step; a read of a URL carries
    /// `headers`, the write's own that a read of the same API needs too.
    fn confirm_read(
        &mut self,
        op: Operation,
        target: &Target,
        context: &Value,
        headers: Vec<(String, String)>,
    ) -> Result<CallSpec, String> {
        let step = self.step_name.clone();
        match target {
            Target::Endpoint(_) | Target::Contracts => {
                let read = match target {
                    Target::Endpoint(read) => *read,
                    _ => Operation::ReadContracts,
                };
                let context = self.read_context();
                let expect = self.success(read);
                (self.spec(read, &step, &context, None, expect)).map_err(|e| e.to_string())
            }
            Target::At(url) => Ok(CallSpec {
                operation: op,
                step,
                method: reqwest::Method::GET,
                path: url.clone(),
                body: None,
                headers,
                expect: Expect::Success(SuccessRule::any_2xx(Operation::ReadContracts)),
                wrong_token: None,
                context: context.clone(),
                uses: Vec::new(),
            }),
        }
    }

    /// Whether the read shows the write's outcome: a success other than 202 whose status
    /// word, if any, is final (or, with `until`, the condition holding over the answer).
    fn shown(&self, op: Operation, read: &mut Pending, context: &Value) -> Shown {
        let Some(response) = read.attempt.response.as_ref() else {
            return Shown::NotYet(format!("no answer ({})", last_answer(read)));
        };
        let status = response.status;
        if !(200..300).contains(&status) || status == 202 {
            return Shown::NotYet(format!("HTTP {status}"));
        }
        let body = response.json();
        let word = status_word(&body);
        if let Some(word) = word
            .as_ref()
            .filter(|w| FAILED.contains(&normal(w).as_str()))
        {
            return Shown::Failed(format!(
                "the {op}'s outcome is `{word}`: it did not take effect; {}",
                last_answer(read)
            ));
        }
        let context = self.confirming_context(op, read, &body, context);
        match self.shared.endpoints.confirm_holds(op, &context) {
            Some(Ok(true)) => Shown::Confirmed(format!("`until` holds: HTTP {status}")),
            Some(Ok(false)) => Shown::NotYet("`until` not yet true".into()),
            Some(Err(error)) => Shown::Failed(error.to_string()),
            None => match word {
                Some(word) if UNDER_WAY.contains(&normal(&word).as_str()) => {
                    Shown::NotYet(format!("status `{word}`"))
                }
                Some(word) => Shown::Confirmed(format!("HTTP {status}, status `{word}`")),
                None => Shown::Confirmed(format!("HTTP {status}")),
            },
        }
    }

    /// The context `until` sees: the write's, with `captured` holding what this answer gives
    /// (the read's built-in values, then the confirm table's captures), each also kept on the
    /// read for the flow.
    fn confirming_context(
        &self,
        op: Operation,
        read: &mut Pending,
        body: &Value,
        context: &Value,
    ) -> Value {
        let mut context = context.clone();
        let product_type = (read.spec.context["product_type"].as_str())
            .or(context["product_type"].as_str())
            .unwrap_or("WITHDRAWAL")
            .to_string();
        let read_op = read.spec.operation;
        for name in crate::endpoints::capture::capture_names(read_op) {
            if let Some((value, _)) = reading::builtin(read_op, name, &product_type, body) {
                context["captured"][*name] = value;
            }
        }
        let empty = Default::default();
        let headers = (read.attempt.response.as_ref()).map_or(&empty, |r| &r.headers);
        let answer = crate::endpoints::AnswerView { body, headers };
        for name in self.shared.endpoints.confirm_captures(op) {
            let found = self
                .shared
                .endpoints
                .confirm_capture(op, &name, &context, answer);
            let Some(Ok(captured)) = found else { continue };
            let Some(value) = captured.value else {
                continue;
            };
            context["captured"][name.as_str()] = value.clone();
            read.reads.push(crate::record::ValueRead {
                name: name.clone(),
                value: as_text(&value).or_else(|| Some(value.to_string())),
                from: format!("confirm: {}", captured.path),
            });
            read.captured.push((name, value, captured.path));
        }
        context
    }
}

/// The write's headers a read of its outcome sends too (`[target.headers]`, `Accept`, a
/// version or gateway key): all but those about the write's own body and its preconditions.
fn read_headers(write: &[(String, String)]) -> Vec<(String, String)> {
    const WRITE_ONLY: [&str; 4] = [
        "content-type",
        "idempotency-key",
        "if-match",
        "if-none-match",
    ];
    (write.iter())
        .filter(|(name, _)| !WRITE_ONLY.contains(&name.to_ascii_lowercase().as_str()))
        .cloned()
        .collect()
}

/// The status word of an answer (`status` or `state`, bare, under `data` or one wrapper
/// deeper), as written.
fn status_word(body: &Value) -> Option<String> {
    let found = tolerant::field(body, "status").or_else(|| tolerant::field(body, "state"));
    found.and_then(|(value, _)| as_text(&value))
}

/// A status word compared as the provider means it: case and padding aside.
fn normal(word: &str) -> String {
    (word.trim().chars())
        .map(|c| match c {
            ' ' | '-' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect()
}

/// The answer in a few words, for a failure.
fn last_answer(read: &Pending) -> String {
    match &read.attempt.response {
        Some(response) => format!("HTTP {}: {}", response.status, response.describe()),
        None => format!(
            "no answer ({})",
            read.attempt.error.as_deref().unwrap_or("none came")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_words_are_compared_whatever_their_case_and_padding() {
        let word = |body: Value| status_word(&body).map(|w| normal(&w));
        assert_eq!(
            word(json!({"status": " running "})).as_deref(),
            Some("RUNNING")
        );
        let nested = json!({"data": {"attributes": {"state": "Succeeded"}}});
        assert_eq!(word(nested).as_deref(), Some("SUCCEEDED"));
        assert_eq!(word(json!({"data": {"id": "x"}})), None);
        assert!(UNDER_WAY.contains(&normal("in progress").as_str()));
        assert!(FAILED.contains(&normal("Failed\n").as_str()));
    }
}

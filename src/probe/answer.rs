//! An answer as the probe judges it: the run's verdict on the call it settled on (its status by
//! the endpoint's rule, a body stating an error, the run's own checks, a claim's confirmation).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::endpoints::{AnswerView, SuccessRule};
use crate::engine::single_call::{ClaimOutcome, Settled};

/// An answer: status, JSON body (`Null` when empty or not JSON) and headers, judged by the
/// same success and error-body rules a run uses.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub status: Option<u16>,
    pub body: Value,
    pub headers: BTreeMap<String, String>,
    pub error: Option<String>,
    pub words: String,
    pub unreachable: bool,
    /// A success by the endpoint's rule whose body states no error: what `run` counts.
    pub(super) ok: bool,
    /// A claim accepted by its answer: how the run's claim confirmation ended.
    pub(super) claim: Option<ClaimOutcome>,
}

impl Answer {
    pub(crate) fn accepted(&self) -> bool {
        self.ok
    }

    pub(crate) fn view(&self) -> AnswerView<'_> {
        AnswerView {
            body: &self.body,
            headers: &self.headers,
        }
    }

    /// The answer a call settled on, judged as `run` judges it: its status by the rule, a
    /// body stating an error, and the run's own checks on the way (a wait that timed out, a
    /// write whose confirmation failed or never came).
    pub(super) fn of(settled: &Settled, rule: &SuccessRule) -> Answer {
        let attempt = &settled.attempt;
        let response = attempt.response.as_ref();
        let error_words = response.and_then(|r| r.error_words());
        let ok = settled.status_ok && error_words.is_none() && settled.failed.is_empty();
        let words = match (&error_words, response) {
            (Some(words), Some(r)) if rule.accepts(r.status) => {
                format!("a success status whose body states an error: {words}")
            }
            (_, Some(_)) if settled.status_ok && !settled.failed.is_empty() => {
                settled.failed.join("; ")
            }
            (_, Some(r)) => r.describe(),
            (_, None) => String::new(),
        };
        Answer {
            status: attempt.status(),
            body: response.map(|r| r.json()).unwrap_or(Value::Null),
            headers: response.map(|r| r.headers.clone()).unwrap_or_default(),
            error: attempt.error.clone(),
            unreachable: attempt.unreachable,
            words,
            ok,
            claim: settled.claim.clone(),
        }
    }
}

//! What a run keeps of each exchange and step, taken from the event without copying what it
//! drops: [`Exchange::slim`] of a clone, and a step without its flow state.

use std::collections::BTreeMap;

use super::{Body, Exchange, Outcome, RequestRecord, ResponseRecord, StepEvent};
use crate::models::Operation;

impl Exchange {
    /// A clone of the exchange, [`slimmed`](Exchange::slim) with the same `sandbox_mark`,
    /// without copying the bodies, headers and checks the slim one drops.
    pub(crate) fn slim_copy(&self, sandbox_mark: bool) -> Exchange {
        let passed = self.outcome == Outcome::Passed;
        let answer_dropped = (self.response.as_ref()).is_some_and(|r| passed && r.accepted());
        let response = self.response.as_ref().map(|response| {
            if answer_dropped {
                slim_answer(response, sandbox_mark)
            } else {
                response.clone()
            }
        });
        let kept_text = |text: &String| {
            if answer_dropped {
                String::new()
            } else {
                text.clone()
            }
        };
        let claim_read = matches!(self.operation, Operation::Claim | Operation::ReadContracts);
        Exchange {
            seq: self.seq,
            flow: self.flow.clone(),
            step: self.step.clone(),
            operation: self.operation,
            booking_number: self.booking_number.clone(),
            attempt: self.attempt,
            method: kept_text(&self.method),
            url: kept_text(&self.url),
            started_at: self.started_at,
            duration_ms: self.duration_ms,
            request: RequestRecord {
                headers: BTreeMap::new(),
                body: None,
                cut: self.request.cut.clone(),
            },
            response,
            outcome: self.outcome,
            checks: exact(self.checks.iter().filter(|check| !check.passed).cloned()),
            error: self.error.clone(),
            expectation: self.expectation,
            retried: self.retried,
            delivery: self.delivery,
            layout: None,
            reads: exact(
                (self.reads.iter())
                    .filter(|read| claim_read && read.name == "claim_status")
                    .cloned(),
            ),
            token_fingerprint: self.token_fingerprint.clone(),
            poll: self.poll,
            phase: self.phase,
        }
    }

    /// [`Exchange::slim_copy`], keeping the sandbox's header on the first exchange that
    /// shows it (see [`Exchange::slim_marked_once`]).
    pub(crate) fn slim_copy_marked_once(&self, marked: &mut bool) -> Exchange {
        let names_sandbox = self.names_sandbox();
        let kept = self.slim_copy(names_sandbox && !*marked);
        *marked |= names_sandbox;
        kept
    }
}

/// An accepted answer as a slim exchange keeps it: no body, and of its headers only the
/// sandbox's (when `sandbox_mark`).
fn slim_answer(response: &ResponseRecord, sandbox_mark: bool) -> ResponseRecord {
    ResponseRecord {
        status: response.status,
        headers: (response.headers.iter())
            .filter(|(name, _)| sandbox_mark && *name == crate::sandbox::SANDBOX_HEADER)
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect(),
        body: Body::null(),
        body_truncated: false,
        cut: response.cut.clone(),
        full_json: None,
        tls_certificate_sha256: response.tls_certificate_sha256.clone(),
        encoding: response.encoding.clone(),
    }
}

/// A vector holding no more room than its items, as the slimmed exchange's `shrink_to_fit`.
fn exact<T>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut items: Vec<T> = items.collect();
    items.shrink_to_fit();
    items
}

impl StepEvent {
    /// [`StepEvent::without_state`] of a clone, without copying the state.
    pub(crate) fn copy_without_state(&self) -> StepEvent {
        StepEvent {
            flow: self.flow.clone(),
            step_index: self.step_index,
            step: self.step.clone(),
            status: self.status,
            reason: self.reason.clone(),
            started_at: self.started_at,
            duration_ms: self.duration_ms,
            state: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn exchange(outcome: &str, status: u16, body: serde_json::Value) -> Exchange {
        serde_json::from_value(json!({
            "seq": 4, "flow": "f#1", "step": "claim", "operation": "claim",
            "booking_number": "B1", "attempt": 2, "method": "POST", "url": "http://x/claims",
            "started_at": "2027-01-01T00:00:00Z", "duration_ms": 3,
            "request": {"headers": {"content-type": "application/json"}, "body": {"data": 1},
                        "cut": {"length": 9, "sha256": "ab"}},
            "response": {"status": status, "body": body,
                         "headers": {"x-ppcert-sandbox": "1", "content-type": "application/json"}},
            "outcome": outcome, "error": null, "layout": "spec", "token_fingerprint": "fp",
            "checks": [{"name": "a", "passed": true, "detail": "ok"},
                       {"name": "b", "passed": false, "detail": "no", "warning": true}],
            "reads": [{"name": "claim_status", "value": "open", "from": "$.data.status"},
                      {"name": "id", "value": "c1", "from": "$.data.id"}],
        }))
        .unwrap()
    }

    /// The copy is exactly the slimmed clone, for answers dropped and kept, marked or not.
    #[test]
    fn a_slim_copy_is_the_slimmed_clone() {
        for x in [
            exchange("passed", 201, json!({"data": {"id": "c1"}})),
            exchange("passed", 200, json!({"error": "refused"})),
            exchange("failed", 201, json!({"data": {"id": "c1"}})),
            exchange("failed", 500, json!(null)),
        ] {
            for mark in [false, true] {
                let mut slimmed = x.clone();
                slimmed.slim(mark);
                assert_eq!(x.slim_copy(mark), slimmed, "{:?} {mark}", x.outcome);
            }
            let (mut a, mut b) = (false, false);
            let mut slimmed = x.clone();
            slimmed.slim_marked_once(&mut a);
            assert_eq!(x.slim_copy_marked_once(&mut b), slimmed);
            assert_eq!(a, b);
        }
    }
}

//! What the evidence keeps of each exchange and step the run emits, taken without copying
//! what it drops: [`Exchange::slim`] of a clone, and a step without its flow state.

use std::collections::BTreeMap;

use crate::models::Operation;
use crate::record::{Body, Exchange, Outcome, RequestRecord, ResponseRecord, StepEvent};

/// A clone of the exchange, [`slimmed`](Exchange::slim) with the same `sandbox_mark`,
/// without copying the bodies, headers and checks the slim one drops.
pub(super) fn slim_copy(x: &Exchange, sandbox_mark: bool) -> Exchange {
    let passed = x.outcome == Outcome::Passed;
    let answer_dropped = (x.response.as_ref()).is_some_and(|r| passed && r.accepted());
    let response = x.response.as_ref().map(|response| {
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
    let claim_read = matches!(x.operation, Operation::Claim | Operation::ReadContracts);
    Exchange {
        seq: x.seq,
        flow: x.flow.clone(),
        step: x.step.clone(),
        operation: x.operation,
        booking_number: x.booking_number.clone(),
        attempt: x.attempt,
        method: kept_text(&x.method),
        url: kept_text(&x.url),
        started_at: x.started_at,
        duration_ms: x.duration_ms,
        request: RequestRecord {
            headers: BTreeMap::new(),
            body: None,
            cut: x.request.cut.clone(),
        },
        response,
        outcome: x.outcome,
        checks: exact(x.checks.iter().filter(|check| !check.passed).cloned()),
        error: x.error.clone(),
        expectation: x.expectation,
        retried: x.retried,
        delivery: x.delivery,
        layout: None,
        reads: exact(
            (x.reads.iter())
                .filter(|read| claim_read && read.name == "claim_status")
                .cloned(),
        ),
        token_fingerprint: x.token_fingerprint.clone(),
        poll: x.poll,
        phase: x.phase,
    }
}

/// [`slim_copy`], keeping the sandbox's header on the first exchange that shows it (as
/// [`Exchange::slim_marked_once`] does).
pub(super) fn slim_copy_marked_once(x: &Exchange, marked: &mut bool) -> Exchange {
    let names_sandbox = x.names_sandbox();
    let kept = slim_copy(x, names_sandbox && !*marked);
    *marked |= names_sandbox;
    kept
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

/// [`StepEvent::without_state`] of a clone, without copying the state.
pub(super) fn step_without_state(step: &StepEvent) -> StepEvent {
    StepEvent {
        flow: step.flow.clone(),
        step_index: step.step_index,
        step: step.step.clone(),
        status: step.status,
        reason: step.reason.clone(),
        started_at: step.started_at,
        duration_ms: step.duration_ms,
        state: None,
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
                assert_eq!(slim_copy(&x, mark), slimmed, "{:?} {mark}", x.outcome);
            }
            let (mut a, mut b) = (false, false);
            let mut slimmed = x.clone();
            slimmed.slim_marked_once(&mut a);
            assert_eq!(slim_copy_marked_once(&x, &mut b), slimmed);
            assert_eq!(a, b);
        }
    }
}

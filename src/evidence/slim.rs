//! What the evidence keeps in memory of each exchange once the journal holds it, taken without
//! copying what it drops.

use std::collections::BTreeMap;

use crate::models::Operation;
use crate::record::{Body, Exchange, Outcome, RequestRecord, ResponseRecord};

/// What a run keeps in memory of an exchange once the journal holds it: what the ledger, the
/// verdict, the failures, the timeline and the webhooks section read. Bodies, headers, the URL
/// and passed checks are read back from the journal for evidence.json and for the exchanges a
/// report shows, so a large run's memory does not grow with what it exchanged. What did not
/// pass is listed among the failures and quoted: its answer stays as it was. `sandbox_mark`:
/// keep the header by which the sandbox names itself (the evidence needs one answer that shows
/// it, not every one).
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

/// [`slim_copy`], keeping the sandbox's header on the first answer that shows it; `marked`
/// says whether one has been kept already.
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

    /// An accepted, passed exchange keeps neither bodies, request headers, URL nor method,
    /// and of its answer's headers only the sandbox's when marked; one that did not pass keeps
    /// its answer whole. Every exchange keeps its failed checks, its claim status read, its
    /// cut and its identity.
    #[test]
    fn a_slim_exchange_keeps_what_the_ledger_and_failures_read() {
        let accepted = exchange("passed", 201, json!({"data": {"id": "c1"}}));
        for mark in [false, true] {
            let slim = slim_copy(&accepted, mark);
            let answer = slim.response.as_ref().unwrap();
            assert_eq!(answer.body, Body::null());
            let headers: Vec<&str> = answer.headers.keys().map(String::as_str).collect();
            assert_eq!(
                headers,
                if mark {
                    vec!["x-ppcert-sandbox"]
                } else {
                    vec![]
                }
            );
            assert!(slim.url.is_empty() && slim.method.is_empty());
        }
        let refused = exchange("passed", 200, json!({"error": "refused"}));
        let failed = exchange("failed", 201, json!({"data": {"id": "c1"}}));
        for kept_whole in [&refused, &failed] {
            let slim = slim_copy(kept_whole, false);
            assert_eq!(
                slim.response, kept_whole.response,
                "{:?}",
                kept_whole.outcome
            );
            assert_eq!(slim.url, kept_whole.url);
        }
        for x in [&accepted, &refused, &failed] {
            let slim = slim_copy(x, true);
            assert!(slim.request.headers.is_empty() && slim.request.body.is_none());
            assert_eq!(slim.request.cut, x.request.cut);
            let checks: Vec<&str> = slim.checks.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(checks, ["b"], "passed checks dropped, failed ones kept");
            let reads: Vec<&str> = slim.reads.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(reads, ["claim_status"]);
            assert_eq!(slim.layout, None);
            assert_eq!(
                (slim.seq, &slim.flow, slim.attempt),
                (x.seq, &x.flow, x.attempt)
            );
        }
        // The sandbox's header is kept on the first answer that shows it, and only there.
        let mut marked = false;
        let first = slim_copy_marked_once(&accepted, &mut marked);
        let second = slim_copy_marked_once(&accepted, &mut marked);
        assert!(marked);
        assert_eq!(first.response.unwrap().headers.len(), 1);
        assert!(second.response.unwrap().headers.is_empty());
    }
}

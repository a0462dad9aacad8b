//! The grading rules on small hand-made records.

use crate::evidence::resilience::{FaultVerdict, Grader};
use crate::models::Operation;
use crate::record::fault::{FaultKind, FaultRule, InjectedFault, Which};
use crate::record::{Body, Delivery, Exchange, Outcome, RequestRecord, ResponseRecord};
use crate::timestamp::Timestamp;

fn at(ms: i64) -> Timestamp {
    Timestamp::from(chrono::DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap())
}

fn fault(rule: usize, operation: Operation, kind: FaultKind, ms: i64) -> InjectedFault {
    InjectedFault {
        rule,
        call: 1,
        operation,
        kind,
        at: at(ms),
        method: "POST".into(),
        path: "/x".into(),
        booking_number: Some("B1".into()),
        idempotency_key: None,
        upstream_status: Some(201),
    }
}

fn exchange(operation: Operation, ms: i64, status: u16) -> Exchange {
    Exchange {
        seq: 0,
        flow: "B1".into(),
        step: operation.to_string(),
        operation,
        booking_number: Some("B1".into()),
        attempt: 1,
        method: "POST".into(),
        url: "http://127.0.0.1/x".into(),
        started_at: at(ms),
        duration_ms: 1,
        request: RequestRecord {
            headers: Default::default(),
            body: None,
            cut: None,
        },
        response: Some(ResponseRecord {
            status,
            headers: Default::default(),
            body: Body::null(),
            body_truncated: false,
            full_json: None,
            cut: None,
            tls_certificate_sha256: None,
            encoding: None,
        }),
        outcome: Outcome::Passed,
        checks: Vec::new(),
        error: None,
        expectation: crate::record::Expectation::Acceptance,
        retried: false,
        delivery: Delivery::Answered,
        layout: None,
        reads: Vec::new(),
        token_fingerprint: None,
        poll: false,
        phase: Default::default(),
    }
}

fn rule(operation: Operation, kind: FaultKind, nth: u32) -> FaultRule {
    FaultRule {
        operation,
        kind,
        which: Which::Nth(nth),
    }
}

fn verdicts(grader: Grader) -> Vec<FaultVerdict> {
    grader
        .finish()
        .unwrap()
        .faults
        .iter()
        .map(|f| f.verdict)
        .collect()
}

const LIMITED: FaultKind = FaultKind::Status {
    status: 429,
    retry_after_ms: Some(1_000),
};

#[test]
fn a_429_is_handled_only_by_a_call_after_its_retry_after() {
    for (next, verdict) in [
        (1_200, FaultVerdict::Handled),
        (300, FaultVerdict::Mishandled),
    ] {
        let mut grader = Grader::default();
        grader.plan(vec![rule(Operation::Quote, LIMITED, 1)]);
        grader.fault(fault(0, Operation::Quote, LIMITED, 0));
        grader.exchange(&exchange(Operation::Quote, next, 201));
        assert_eq!(verdicts(grader), vec![verdict], "next call after {next} ms");
    }
}

#[test]
fn a_lost_answer_is_handled_by_reading_back_not_by_doing_nothing() {
    let plan = || vec![rule(Operation::Subscription, FaultKind::LostAnswer, 1)];
    let mut read_back = Grader::default();
    read_back.plan(plan());
    read_back.fault(fault(0, Operation::Subscription, FaultKind::LostAnswer, 0));
    read_back.exchange(&exchange(Operation::Subscription, 10, 409));
    read_back.exchange(&exchange(Operation::ReadContracts, 20, 200));
    assert_eq!(verdicts(read_back), vec![FaultVerdict::Handled]);

    let mut conflicted = Grader::default();
    conflicted.plan(plan());
    conflicted.fault(fault(0, Operation::Subscription, FaultKind::LostAnswer, 0));
    conflicted.exchange(&exchange(Operation::Subscription, 10, 409));
    let graded = conflicted.finish().unwrap();
    assert_eq!(graded.faults[0].verdict, FaultVerdict::Mishandled);
    assert!(graded.faults[0].client_did.contains("never read"));
    assert!(!graded.met);

    let mut idle = Grader::default();
    idle.plan(plan());
    idle.fault(fault(0, Operation::Subscription, FaultKind::LostAnswer, 0));
    assert_eq!(verdicts(idle), vec![FaultVerdict::Mishandled]);
}

#[test]
fn a_fault_whose_call_never_came_is_not_reached_and_not_met() {
    let mut grader = Grader::default();
    grader.plan(vec![rule(Operation::Claim, LIMITED, 3)]);
    let graded = grader.finish().unwrap();
    assert_eq!(graded.faults[0].verdict, FaultVerdict::NotReached);
    assert!(!graded.met);
    assert!(Grader::default().finish().is_none(), "no plan, no section");
}

fn relayed(status: Option<u16>, duplicate: bool) -> crate::record::fault::RelayedWebhook {
    crate::record::fault::RelayedWebhook {
        at: at(5),
        event: Some("contract.created".into()),
        booking_number: Some("B1".into()),
        status,
        error: None,
        duplicate,
    }
}

#[test]
fn a_duplicate_webhook_is_handled_only_when_both_deliveries_are_acknowledged() {
    let graded = |first: Option<u16>, second: Option<u16>| {
        let mut grader = Grader::default();
        grader.plan(vec![rule(
            Operation::Subscription,
            FaultKind::DuplicateWebhook,
            1,
        )]);
        grader.webhook(&relayed(first, false));
        let mut injected = fault(0, Operation::Subscription, FaultKind::DuplicateWebhook, 0);
        injected.upstream_status = first;
        grader.fault(injected);
        grader.webhook(&relayed(second, true));
        verdicts(grader)
    };
    assert_eq!(graded(Some(200), Some(204)), vec![FaultVerdict::Handled]);
    assert_eq!(graded(Some(200), Some(500)), vec![FaultVerdict::Mishandled]);
    assert_eq!(graded(Some(200), None), vec![FaultVerdict::Mishandled]);
    assert_eq!(graded(Some(503), Some(200)), vec![FaultVerdict::Mishandled]);
}

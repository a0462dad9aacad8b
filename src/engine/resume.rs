//! Where each flow of an interrupted run picks up, read from what its journal recorded.

use std::collections::HashMap;

use super::state::{FlowInstance, ResumePoint};
use crate::models::Operation;
use crate::record::{Delivery, Exchange, StepEvent, StepStatus};

/// The resume point of every flow that had begun; a flow absent from the map starts afresh.
/// `unsettled` are the exchanges journaled after their flow's last step line: only the step
/// the run died in can have made them, never an earlier step of the same name.
/// Records are grouped by flow first: a large run has tens of thousands of each, and a scan per
/// flow would make resuming it quadratic.
/// `lost` are the calls whose answer was lost and never settled (see [`open_lost_calls`]).
pub(crate) fn resume_points(
    instances: &[FlowInstance],
    started: &[(String, usize)],
    steps: &[StepEvent],
    unsettled: &[Exchange],
    lost: &LostCalls,
) -> HashMap<String, ResumePoint> {
    let steps_of = group(steps, |s| &s.flow);
    let exchanges_of = group(unsettled, |x| &x.flow);
    let mut started_at: HashMap<&str, Vec<usize>> = HashMap::new();
    for (flow, index) in started {
        started_at.entry(flow).or_default().push(*index);
    }
    let mut points = HashMap::new();
    for instance in instances {
        let label = instance.label.as_str();
        let mut point = ResumePoint::default();
        for event in steps_of.get(label).into_iter().flatten() {
            if event.status == StepStatus::Passed && event.step_index == point.next_step {
                point.next_step += 1;
                point.state = event
                    .state
                    .clone()
                    .and_then(|s| serde_json::from_value(s).ok());
            }
        }
        if point.next_step > 0 && point.state.is_none() {
            point = ResumePoint::default();
        }
        point.mid_step = started_at
            .get(label)
            .is_some_and(|indexes| indexes.contains(&point.next_step));
        if point.mid_step
            && let Some(step) = instance.steps.get(point.next_step)
        {
            // What the interrupted step already got done: it is finished, not redone.
            let name = step.name();
            point.done_in_step = exchanges_of
                .get(label)
                .into_iter()
                .flatten()
                .filter(|x| x.step == name && x.counts_as_success())
                .map(|x| Exchange::clone(x))
                .collect();
        }
        if let Some(step) = instance.steps.get(point.next_step) {
            let name = step.name();
            point.lost_in_step = (lost.iter())
                .filter(|((_, flow, step), _)| flow == label && *step == name)
                .map(|((operation, _, _), last)| (*operation, *last))
                .collect();
        }
        if point.next_step > 0 || point.mid_step || !point.lost_in_step.is_empty() {
            points.insert(instance.label.clone(), point);
        }
    }
    points
}

/// Calls (operation, flow, step) with an attempt whose answer was lost and nothing after it
/// that settled it, with their last attempt number: what the ledger (`evidence/ledger.rs`)
/// still holds open, and would count unconfirmed when another call's attempt 1 came.
pub(crate) type LostCalls = HashMap<(Operation, String, String), u32>;

/// The calls of `exchanges` (a journal's, in order) whose answer was lost and never settled.
pub(crate) fn open_lost_calls(exchanges: &[Exchange]) -> LostCalls {
    let mut open = LostCalls::new();
    for x in exchanges {
        let key = (x.operation, x.flow.clone(), x.step.clone());
        if x.attempt == 1 {
            open.remove(&key);
        }
        if x.delivery == Delivery::MaybeProcessed {
            open.insert(key, x.attempt);
        } else if x.counts_as_success() {
            open.remove(&key);
        } else if let Some(last) = open.get_mut(&key) {
            *last = x.attempt;
        }
    }
    open
}

fn group<T>(items: &[T], flow: impl Fn(&T) -> &String) -> HashMap<&str, Vec<&T>> {
    let mut groups: HashMap<&str, Vec<&T>> = HashMap::new();
    for item in items {
        groups.entry(flow(item).as_str()).or_default().push(item);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Step;
    use serde_json::json;

    fn instance(label: &str) -> FlowInstance {
        FlowInstance {
            label: label.into(),
            flow: "f".into(),
            ordinal: 0,
            index: 0,
            steps: vec![
                Step::Quote,
                Step::Subscribe,
                Step::ReadContracts {
                    when_unknown: false,
                },
            ],
            early: false,
        }
    }

    fn step(flow: &str, index: usize, name: &str, status: &str, state: bool) -> StepEvent {
        let state = state.then(|| {
            let day = &flow[2..];
            let subscribed_at =
                crate::timestamp::Timestamp::parse(&format!("2027-01-0{day}T00:00:00Z")).ok();
            serde_json::to_value(crate::record::FlowState {
                subscribed_at,
                ..Default::default()
            })
            .unwrap()
        });
        serde_json::from_value(json!({
            "flow": flow, "step_index": index, "step": name, "status": status,
            "reason": null, "started_at": "2027-01-01T00:00:00Z", "duration_ms": 1,
            "state": state,
        }))
        .unwrap()
    }

    fn exchange(flow: &str, step: &str, status: u16) -> Exchange {
        serde_json::from_value(json!({
            "seq": 1, "flow": flow, "step": step, "operation": "subscription",
            "booking_number": null, "attempt": 1, "method": "POST", "url": "http://x/s",
            "started_at": "2027-01-01T00:00:00Z", "duration_ms": 3,
            "request": {"headers": {}, "body": null},
            "response": {"status": status, "headers": {}, "body": {}},
            "outcome": "passed", "checks": [], "error": null,
        }))
        .unwrap()
    }

    #[test]
    fn a_fresh_run_has_no_resume_points() {
        let instances: Vec<_> = (1..=3).map(|n| instance(&format!("f#{n}"))).collect();
        assert!(resume_points(&instances, &[], &[], &[], &LostCalls::new()).is_empty());
    }

    #[test]
    fn a_flow_picks_up_after_its_last_passed_step_in_order() {
        let instances = [instance("f#1"), instance("f#2"), instance("f#3")];
        let steps = [
            step("f#1", 0, "quote", "passed", true),
            step("f#2", 0, "quote", "passed", true),
            step("f#2", 1, "subscribe", "failed", true),
            // A passed step after a gap does not move the point past the gap.
            step("f#3", 1, "subscribe", "passed", true),
        ];
        let points = resume_points(&instances, &[], &steps, &[], &LostCalls::new());
        assert_eq!(points["f#1"].next_step, 1);
        assert_eq!(points["f#2"].next_step, 1, "a failed step is run again");
        assert!(!points.contains_key("f#3"));
        let state = points["f#1"].state.as_ref().unwrap();
        assert_eq!(
            state.subscribed_at.map(|at| at.to_string()).as_deref(),
            Some("2027-01-01T00:00:00.000Z")
        );
    }

    #[test]
    fn a_passed_step_without_its_state_starts_the_flow_afresh() {
        let steps = [step("f#1", 0, "quote", "passed", false)];
        assert!(resume_points(&[instance("f#1")], &[], &steps, &[], &LostCalls::new()).is_empty());
    }

    #[test]
    fn an_interrupted_step_keeps_the_calls_it_got_done() {
        let steps = [step("f#1", 0, "quote", "passed", true)];
        let started = [("f#1".to_string(), 1)];
        let exchanges = [
            exchange("f#1", "subscribe", 201),
            exchange("f#1", "subscribe", 500),
            exchange("f#2", "subscribe", 201),
            exchange("f#1", "quote", 201),
        ];
        let instances = [instance("f#1"), instance("f#2")];
        let points = resume_points(&instances, &started, &steps, &exchanges, &LostCalls::new());
        let point = &points["f#1"];
        assert!(point.mid_step);
        assert_eq!(
            point.done_in_step.len(),
            1,
            "only this flow's accepted subscribe"
        );
        assert_eq!(point.done_in_step[0].response.as_ref().unwrap().status, 201);
    }

    /// A call whose answer was lost stays open until an attempt of it succeeds or another
    /// call (attempt 1) begins; a later attempt that fails keeps it open with its number.
    #[test]
    fn a_lost_call_stays_open_until_settled_or_replaced() {
        let attempt = |flow: &str, number: u32, status: Option<u16>| {
            let mut x = exchange(flow, "subscribe", status.unwrap_or(0));
            x.attempt = number;
            if status.is_none() {
                x.response = None;
                x.delivery = Delivery::MaybeProcessed;
            }
            x
        };
        let exchanges = [
            attempt("a#1", 1, None),
            attempt("a#1", 2, Some(503)),
            attempt("b#1", 1, None),
            attempt("b#1", 2, Some(201)),
            attempt("c#1", 1, None),
            attempt("c#1", 1, Some(400)),
        ];
        let open = open_lost_calls(&exchanges);
        let key = |flow: &str| {
            (
                Operation::Subscription,
                flow.to_string(),
                "subscribe".into(),
            )
        };
        assert_eq!(open.get(&key("a#1")), Some(&2));
        assert_eq!(open.len(), 1, "{open:?}");
        // The flow redoes its subscribe step (its quote passed): it numbers on from attempt 2.
        let steps = [step("a#1", 0, "quote", "passed", true)];
        let points = resume_points(&[instance("a#1")], &[], &steps, &[], &open);
        assert_eq!(points["a#1"].lost_in_step, [(Operation::Subscription, 2)]);
    }
}

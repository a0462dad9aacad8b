//! Where each flow of an interrupted run picks up, read from what its journal recorded.

use std::collections::HashMap;

use super::state::{FlowInstance, ResumePoint};
use crate::record::{Delivery, Exchange, StepEvent, StepStatus};

/// The resume point of every flow that had begun; a flow absent from the map starts afresh.
/// `unsettled` are the exchanges journaled after their flow's last step line: only the step
/// the run died in can have made them, never an earlier step of the same name.
/// Records are grouped by flow first: a large run has tens of thousands of each, and a scan per
/// flow would make resuming it quadratic.
pub(crate) fn resume_points(
    instances: &[FlowInstance],
    started: &[(String, usize)],
    steps: &[StepEvent],
    unsettled: &[Exchange],
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
            // What the interrupted step already got done (it is finished, not redone), and
            // the attempts whose answer it lost (its redo numbers on from them, as one call).
            let name = step.name();
            point.done_in_step = exchanges_of
                .get(label)
                .into_iter()
                .flatten()
                .filter(|x| x.step == name)
                .filter(|x| x.counts_as_success() || x.delivery == Delivery::MaybeProcessed)
                .map(|x| Exchange::clone(x))
                .collect();
        }
        if point.next_step > 0 || point.mid_step {
            points.insert(instance.label.clone(), point);
        }
    }
    points
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
        assert!(resume_points(&instances, &[], &[], &[]).is_empty());
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
        let points = resume_points(&instances, &[], &steps, &[]);
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
        assert!(resume_points(&[instance("f#1")], &[], &steps, &[]).is_empty());
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
        let points = resume_points(&instances, &started, &steps, &exchanges);
        let point = &points["f#1"];
        assert!(point.mid_step);
        let done: Vec<_> = (point.done_in_step.iter())
            .filter(|x| x.counts_as_success())
            .collect();
        assert_eq!(done.len(), 1, "only this flow's accepted subscribe");
        assert_eq!(done[0].response.as_ref().unwrap().status, 201);
    }
}

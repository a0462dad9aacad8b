//! junit.xml of a `ppcert proxy` session (a step per exchange, possibly hundreds of thousands,
//! its record left in the journal): the requirements suite whole, then a suite per flow listing
//! the steps that did not pass (the first [`FAILED_SHOWN`]) and the first [`PASSED_LISTED`]
//! that passed, so it stays a size CI tools read and its memory stays flat. A suite with steps
//! left out says how many (property `ppcert.steps_not_listed`, and its system-out);
//! evidence.json holds every step. Rendered again from evidence.json, it comes out the same.

use std::collections::{BTreeMap, HashMap};

use quick_junit::{Property, TestSuite};

use super::junit::{requirements, step_case};
use super::pass::{FAILED_SHOWN, ROWS_SHOWN};
use crate::evidence::Evidence;
use crate::record::{Exchange, StepEvent, StepStatus};

/// Passed steps listed, in all.
pub(super) const PASSED_LISTED: usize = ROWS_SHOWN;

/// The steps listed, per flow by index (a later record of a step replaces the earlier one), and
/// how many each flow leaves out.
#[derive(Default)]
struct Listed {
    steps: HashMap<String, BTreeMap<usize, StepEvent>>,
    left_out: HashMap<String, usize>,
    failed: usize,
    passed: usize,
}

impl Listed {
    fn add(&mut self, step: &StepEvent) {
        let (count, cap) = if step.status == StepStatus::Passed {
            (&mut self.passed, PASSED_LISTED)
        } else {
            (&mut self.failed, FAILED_SHOWN)
        };
        if *count < cap {
            *count += 1;
            (self.steps.entry(step.flow.clone()).or_default())
                .insert(step.step_index, step.clone());
        } else if let Some(n) = self.left_out.get_mut(&step.flow) {
            *n += 1;
        } else {
            self.left_out.insert(step.flow.clone(), 1);
        }
    }
}

/// The last exchange of each (flow, step) a listed failed step names, which its testcase
/// quotes as the whole report does; only those are kept.
fn quoted(
    evidence: &Evidence,
    listed: &Listed,
) -> std::io::Result<HashMap<String, HashMap<String, Option<Exchange>>>> {
    let mut last: HashMap<String, HashMap<String, Option<Exchange>>> = HashMap::new();
    for step in
        (listed.steps.values().flat_map(|s| s.values())).filter(|s| s.status == StepStatus::Failed)
    {
        (last.entry(step.flow.clone()).or_default()).insert(step.step.clone(), None);
    }
    if last.is_empty() {
        return Ok(last);
    }
    evidence.for_each_exchange(|x| {
        if let Some(kept) = last.get_mut(&x.flow).and_then(|f| f.get_mut(&x.step)) {
            *kept = Some(x.clone());
        }
        Ok(())
    })?;
    Ok(last)
}

/// The suites: requirements first, then one per flow of the record.
pub(super) fn suites(evidence: &Evidence) -> std::io::Result<Vec<TestSuite>> {
    let mut listed = Listed::default();
    evidence.for_each_step(|step| {
        listed.add(step);
        Ok(())
    })?;
    let last = quoted(evidence, &listed)?;
    let mut suites = vec![requirements(evidence)];
    for flow in &evidence.flows {
        let mut suite = TestSuite::new(flow.label.clone());
        for step in (listed.steps.get(&flow.label).into_iter()).flat_map(|s| s.values()) {
            let quote =
                (last.get(&flow.label).and_then(|f| f.get(&step.step))).and_then(Option::as_ref);
            suite.add_test_case(step_case(evidence, &flow.flow, step, quote));
        }
        if let Some(n) = listed.left_out.get(&flow.label) {
            suite.add_property(Property::new("ppcert.steps_not_listed", n.to_string()));
            suite.set_system_out(format!(
                "{n} more steps of this flow are not listed: junit.xml lists the first {FAILED_SHOWN} steps that did not pass and the first {PASSED_LISTED} that passed; evidence.json holds every step"
            ));
        }
        suites.push(suite);
    }
    Ok(suites)
}

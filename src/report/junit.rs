//! `junit.xml`: a `requirements` testsuite with one testcase per requirement (failed when not
//! met), then one testsuite per flow with one testcase per step, named by flow instance so
//! viewers never merge repeats; failures carry the server's words and an excerpt of the answer.
//! Written with quick-junit so common consumers accept it, in time linear in the record.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::pretty::pretty_body;
use crate::evidence::Evidence;
use crate::record::{Exchange, StepEvent, StepStatus};

const EXCERPT: usize = 2000;

fn excerpt(exchange: Option<&Exchange>) -> Option<String> {
    let exchange = exchange?;
    let mut text = format!("{} {}", exchange.method, exchange.url);
    match &exchange.response {
        Some(r) => {
            text.push_str(&format!(" → HTTP {}\n", r.status));
            if let (Some(body), _) = pretty_body(&r.body, r.body_truncated) {
                let cut = body.floor_char_boundary(EXCERPT);
                text.push_str(&body[..cut]);
            }
        }
        None => text.push_str(&format!(
            " → {}",
            exchange.error.as_deref().unwrap_or("no answer")
        )),
    }
    Some(text)
}

/// The exchanges whose answer a failure's excerpt quotes: the last of each failed step, the
/// first [`super::view::FAILED_SHOWN`] of them (a run failing everywhere quotes the status line
/// of the rest, whose bodies stay in evidence.json).
pub(super) fn quoted(evidence: &Evidence) -> std::collections::HashSet<u64> {
    let mut last: HashMap<(&str, &str), u64> = HashMap::new();
    for exchange in &evidence.exchanges {
        last.insert((&exchange.flow, &exchange.step), exchange.seq);
    }
    evidence
        .steps
        .iter()
        .filter(|s| s.status != StepStatus::Passed)
        .filter_map(|s| last.get(&(s.flow.as_str(), s.step.as_str())).copied())
        .take(super::view::FAILED_SHOWN)
        .collect()
}

pub(super) fn render(evidence: &Evidence, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    write_with(evidence, out, &mut |each| for_each_suite(evidence, each))
}

/// junit.xml of `suites`, built beforehand (a proxy session's, which list only some of its
/// steps: see `junit_listed`).
pub(super) fn write(
    evidence: &Evidence,
    suites: &[TestSuite],
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    write_with(evidence, out, &mut |each| {
        suites.iter().try_for_each(|suite| each(suite.clone()))
    })
}

/// Hands each suite to the function it is given, in order.
type Suites<'a> =
    dyn FnMut(&mut dyn FnMut(TestSuite) -> std::io::Result<()>) -> std::io::Result<()> + 'a;

fn write_with(
    evidence: &Evidence,
    out: &mut dyn std::io::Write,
    listed: &mut Suites<'_>,
) -> std::io::Result<()> {
    // The suites listed, then what regressed since `--baseline`'s bundle, if one was named.
    let mut suites = |each: &mut dyn FnMut(TestSuite) -> std::io::Result<()>| {
        listed(each)?;
        super::junit_baseline::suite(evidence).map_or(Ok(()), &mut *each)?;
        super::junit_resilience::suite(evidence).map_or(Ok(()), each)
    };
    // A large run has a testcase per step: each suite is built and written in turn, never the
    // whole report at once. The totals in the opening tag need one counting pass first.
    let mut totals = Report::new(format!(
        "ppcert {} ({})",
        evidence.run.scenario, evidence.run.id
    ));
    totals.set_timestamp(evidence.run.started_at.as_datetime());
    suites(&mut |suite| {
        totals.add_test_suite(suite);
        totals.test_suites.clear();
        Ok(())
    })?;
    let frame = totals.to_string().map_err(std::io::Error::other)?;
    let (head, tail) = frame
        .rsplit_once(CLOSING)
        .ok_or_else(|| std::io::Error::other("quick-junit wrote no closing tag"))?;
    out.write_all(head.as_bytes())?;
    suites(&mut |suite| {
        let mut one = Report::new("");
        one.add_test_suite(suite);
        let text = one.to_string().map_err(std::io::Error::other)?;
        out.write_all(suite_lines(&text).as_bytes())
    })?;
    write!(out, "{CLOSING}{tail}")
}

const CLOSING: &str = "</testsuites>";

/// The `<testsuite>` element of a one-suite report, as quick-junit indents it inside
/// `<testsuites>`: everything after the opening tag's line, up to the closing tag.
fn suite_lines(report: &str) -> &str {
    let body = report
        .split_once("<testsuites")
        .map_or("", |(_, rest)| rest);
    let body = body.split_once('\n').map_or("", |(_, rest)| rest);
    body.rsplit_once(CLOSING).map_or(body, |(inner, _)| inner)
}

/// The requirements suite, then one suite per flow, each handed over as soon as it is built.
fn for_each_suite(
    evidence: &Evidence,
    each: &mut dyn FnMut(TestSuite) -> std::io::Result<()>,
) -> std::io::Result<()> {
    each(requirements(evidence))?;
    let last_exchange = quoted_exchanges(evidence)?;
    // Each flow's steps with the latest record per step (a resumed run records a step again).
    let mut steps_of: HashMap<&str, BTreeMap<usize, &StepEvent>> = HashMap::new();
    for step in &evidence.steps {
        steps_of
            .entry(&step.flow)
            .or_default()
            .insert(step.step_index, step);
    }
    for flow in &evidence.flows {
        let mut suite = TestSuite::new(flow.label.clone());
        for step in steps_of
            .get(flow.label.as_str())
            .into_iter()
            .flat_map(|s| s.values())
        {
            let last = (step.status == StepStatus::Failed)
                .then(|| last_exchange.get(&(flow.label.clone(), step.step.clone())))
                .flatten();
            suite.add_test_case(step_case(evidence, &flow.flow, step, last));
        }
        each(suite)?;
    }
    Ok(())
}

/// The last exchange of every (flow, step) a failed step's testcase quotes, in one pass over
/// the exchanges (from memory, or from the journal one at a time): only those are kept.
fn quoted_exchanges(evidence: &Evidence) -> std::io::Result<HashMap<(String, String), Exchange>> {
    let failed: std::collections::HashSet<(&str, &str)> = (evidence.steps.iter())
        .filter(|s| s.status == StepStatus::Failed)
        .map(|s| (s.flow.as_str(), s.step.as_str()))
        .collect();
    let mut last = HashMap::new();
    evidence.for_each_exchange(|x| {
        if failed.contains(&(x.flow.as_str(), x.step.as_str())) {
            last.insert((x.flow.clone(), x.step.clone()), x.clone());
        }
        Ok(())
    })?;
    Ok(last)
}

/// The requirement ledger as testcases, so a consumer fails the build exactly when the exit
/// code does.
pub(super) fn requirements(evidence: &Evidence) -> TestSuite {
    let mut suite = TestSuite::new("requirements");
    for r in &evidence.requirements {
        let status = if r.met {
            TestCaseStatus::success()
        } else {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(format!(
                "{}: {} succeeded of {} required ({} failed, {} unconfirmed)",
                r.operation, r.succeeded, r.required, r.failed, r.unconfirmed
            ));
            status
        };
        let mut case = TestCase::new(format!("requirement › {}", r.operation), status);
        case.set_classname(format!("{}.requirements", evidence.run.scenario));
        suite.add_test_case(case);
    }
    suite
}

pub(super) fn step_case(
    evidence: &Evidence,
    flow: &str,
    step: &StepEvent,
    last: Option<&Exchange>,
) -> TestCase {
    let status = match step.status {
        StepStatus::Passed => TestCaseStatus::success(),
        StepStatus::Skipped => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(step.reason.clone().unwrap_or_default());
            status
        }
        StepStatus::Failed => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(step.reason.clone().unwrap_or_default());
            if let Some(text) = excerpt(last) {
                status.set_description(text);
            }
            status
        }
    };
    let name = format!("{} › {} {}", step.flow, step.step_index + 1, step.step);
    let mut case = TestCase::new(name, status);
    case.set_classname(format!("{}.{}", evidence.run.scenario, flow));
    case.set_time(Duration::from_millis(step.duration_ms));
    case.set_timestamp(step.started_at.as_datetime());
    case
}

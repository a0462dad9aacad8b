//! `junit.xml`: one testsuite per flow, one testcase per step, failures with the message and
//! an excerpt of the answer, written with quick-junit so common consumers accept it.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::view::pretty_body;
use crate::evidence::Evidence;
use crate::record::{Exchange, StepStatus};

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

pub fn render(evidence: &Evidence) -> std::io::Result<Vec<u8>> {
    let mut report = Report::new(format!(
        "ppcert {} ({})",
        evidence.run.scenario, evidence.run.id
    ));
    if let Ok(at) = chrono::DateTime::parse_from_rfc3339(&evidence.run.started_at) {
        report.set_timestamp(at);
    }
    for flow in &evidence.flows {
        let mut suite = TestSuite::new(flow.label.clone());
        for step in evidence.steps.iter().filter(|s| s.flow == flow.label) {
            let last = evidence
                .exchanges
                .iter()
                .rev()
                .find(|x| x.flow == flow.label && x.step == step.step);
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
            let mut case = TestCase::new(format!("{} {}", step.step_index + 1, step.step), status);
            case.set_classname(format!("{}.{}", evidence.run.scenario, flow.flow));
            case.set_time(Duration::from_millis(step.duration_ms));
            if let Ok(at) = chrono::DateTime::parse_from_rfc3339(&step.started_at) {
                case.set_timestamp(at);
            }
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .map(String::into_bytes)
        .map_err(std::io::Error::other)
}

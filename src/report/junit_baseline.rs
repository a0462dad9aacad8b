//! junit.xml's `baseline` testsuite (`run --baseline`, `proxy --baseline`): a failed testcase
//! per regression since the baseline, or one passed testcase saying there is none, so a CI's
//! test view shows what regressed as the exit code (1) says it.

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

use crate::evidence::Evidence;

pub(super) fn suite(evidence: &Evidence) -> Option<TestSuite> {
    let drift = evidence.baseline.as_ref()?;
    let mut suite = TestSuite::new("baseline");
    let classname = format!("{}.baseline", evidence.run.scenario);
    for finding in &drift.regressions {
        // Accepted regressions are shown, not failed: the run did not fail on them.
        let mut status = if drift.accepted {
            TestCaseStatus::skipped()
        } else {
            TestCaseStatus::non_success(NonSuccessKind::Failure)
        };
        status.set_message(finding.message.clone());
        let mut description = format!(
            "regressed since the baseline {} (run {}){}",
            drift.base.bundle,
            drift.base.run_id,
            if drift.accepted {
                "; accepted with --accept-drift"
            } else {
                ""
            }
        );
        for consequence in &finding.consequences {
            description.push_str(&format!("\nfollowing from it: {}", consequence.message));
        }
        status.set_description(description);
        let where_ = match &finding.path {
            Some(path) => format!("{} {path}", finding.subject),
            None => finding.subject.clone(),
        };
        let name = format!("baseline › {where_} › {}", kind_word(finding));
        let mut case = TestCase::new(name, status);
        case.set_classname(classname.clone());
        suite.add_test_case(case);
    }
    if drift.regressions.is_empty() {
        let mut case = TestCase::new("baseline › no regression", TestCaseStatus::success());
        case.set_classname(classname);
        suite.add_test_case(case);
    }
    Some(suite)
}

/// The finding's kind as written in evidence.json (`read_field_missing`).
fn kind_word(finding: &crate::evidence::baseline::Finding) -> String {
    serde_json::to_value(finding.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

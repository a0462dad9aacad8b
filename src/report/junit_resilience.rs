//! junit.xml's `resilience` testsuite (`proxy --faults`): a testcase per fault of the plan,
//! failed when the client mishandled it or never reached it, saying what the client did.

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

use crate::evidence::Evidence;
use crate::evidence::resilience::FaultVerdict;

pub(super) fn suite(evidence: &Evidence) -> Option<TestSuite> {
    let resilience = evidence.resilience.as_ref()?;
    let mut suite = TestSuite::new("resilience");
    for (i, fault) in resilience.faults.iter().enumerate() {
        let call = fault.call.map(|c| format!(" call {c}")).unwrap_or_default();
        let name = format!(
            "resilience › {} › {}{call} #{}",
            fault.operation,
            fault.kind.describe(),
            i + 1
        );
        let status = match fault.verdict {
            FaultVerdict::Handled => TestCaseStatus::success(),
            verdict => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(format!("{}: {}", verdict.as_str(), fault.client_did));
                status
            }
        };
        let mut case = TestCase::new(name, status);
        case.set_classname("resilience");
        if fault.verdict == FaultVerdict::Handled {
            case.set_system_out(fault.client_did.clone());
        }
        suite.add_test_case(case);
    }
    Some(suite)
}

//! A record's resilience section put in place: the faults graded (at a session's end, from
//! its journal), the ledger's `resilience` row, and the verdict failed when the plan was not
//! met.

use super::counted::Counted;
use super::ledger::RequirementResult;
use super::model::{Evidence, Verdict};
use super::resilience::{FaultVerdict, Grader, Resilience};

/// The record's verdict with its resilience: a plan not every fault of which was handled
/// fails a session that passed otherwise, and the ledger gains a `resilience` row (last,
/// after the operations'), met when every fault was handled.
pub(crate) fn apply(evidence: &mut Evidence, resilience: Option<Resilience>) {
    evidence
        .requirements
        .retain(|r| r.operation != Counted::Resilience);
    if let Some(resilience) = &resilience {
        evidence.requirements.push(row(resilience));
    }
    if resilience.as_ref().is_some_and(|r| !r.met) && evidence.verdict == Verdict::Passed {
        evidence.verdict = Verdict::Failed;
    }
    evidence.resilience = resilience;
}

/// The ledger's row of a plan: every fault required handled; a mishandled one failed, one
/// the client never reached unconfirmed (nothing shows how it would have handled it).
fn row(resilience: &Resilience) -> RequirementResult {
    let count = |verdict| {
        let matching = resilience.faults.iter().filter(|f| f.verdict == verdict);
        matching.count() as u32
    };
    RequirementResult {
        operation: Counted::Resilience,
        required: resilience.required,
        succeeded: resilience.handled,
        failed: count(FaultVerdict::Mishandled),
        unconfirmed: count(FaultVerdict::NotReached),
        met: resilience.met,
    }
}

/// Grades the faults of the journal at `path` (a proxy session's, when it ends).
pub(crate) fn grade_journal(path: &std::path::Path) -> std::io::Result<Option<Resilience>> {
    use crate::journal::{EXCHANGE_TAG, FAULT_PLAN_TAG, FAULT_TAG, Line, WEBHOOK_TAG, each_line};
    let mut grader = Grader::default();
    each_line(
        path,
        &[FAULT_PLAN_TAG, FAULT_TAG, EXCHANGE_TAG, WEBHOOK_TAG],
        true,
        |line| {
            match line {
                Line::FaultPlan { rules } => grader.plan(rules),
                Line::Fault(fault) => grader.fault(fault),
                Line::Webhook(relayed) => grader.webhook(&relayed),
                Line::Exchange(exchange) if grader.active() => grader.exchange(&exchange),
                _ => {}
            }
            Ok(true)
        },
    )?;
    Ok(grader.finish())
}

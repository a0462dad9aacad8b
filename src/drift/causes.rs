//! Regressions grouped under what caused them: one renamed field makes the operations after
//! it unsendable, their requirements unmet and the verdict worse, and a report that lists all
//! of them side by side hides the one change behind a dozen lines. A cause is a difference in
//! what the staging answered (a status, a field ppcert reads, a value it could not read); a
//! consequence is what follows in the ledger (the verdict, a requirement no longer met, an
//! operation no longer sent). Which cause a consequence follows from is inferred: the cause on
//! the same operation, else the earliest cause on an operation sent before it, else the
//! earliest cause. Without any cause, consequences stand as regressions of their own.

use crate::evidence::baseline::{Finding, FindingKind};
use crate::models::Operation;

/// Whether a regression of `kind` follows from other regressions rather than causing them.
fn is_consequence(kind: FindingKind) -> bool {
    matches!(
        kind,
        FindingKind::VerdictWorse
            | FindingKind::RequirementNoLongerMet
            | FindingKind::OperationGone
    )
}

/// The operation a finding is about: its subject's first word (`quote in step update`), or
/// for the ledger the operation its sentence names (`ledger: claim no longer met …`).
fn operation(finding: &Finding) -> Option<Operation> {
    let first = finding.subject.split(' ').next().unwrap_or_default();
    if finding.subject == "ledger" {
        let named = finding.message.strip_prefix("ledger: ")?;
        return Operation::parse(named.split(' ').next().unwrap_or_default());
    }
    Operation::parse(first)
}

/// Where an operation comes in a batch: quotes first, claims late.
fn order(operation: Option<Operation>) -> usize {
    operation
        .and_then(|op| Operation::ALL.iter().position(|o| *o == op))
        .unwrap_or(usize::MAX)
}

/// Which cause `consequence` follows from (an index into `causes`, sorted by order).
fn cause_of(consequence: &Finding, causes: &[Finding]) -> usize {
    let at = operation(consequence);
    let same = (consequence.kind == FindingKind::RequirementNoLongerMet)
        .then(|| {
            causes
                .iter()
                .position(|c| at.is_some() && operation(c) == at)
        })
        .flatten();
    let before = || {
        (at.is_some())
            .then(|| causes.iter().position(|c| order(operation(c)) < order(at)))
            .flatten()
    };
    same.or_else(before).unwrap_or(0)
}

/// The regressions with each consequence moved under its cause; the causes first in batch
/// order. Unchanged when nothing in them is a cause.
pub(crate) fn group(regressions: Vec<Finding>) -> Vec<Finding> {
    let (consequences, mut causes): (Vec<Finding>, Vec<Finding>) = regressions
        .into_iter()
        .partition(|f| is_consequence(f.kind));
    if causes.is_empty() {
        return consequences;
    }
    causes.sort_by_key(|c| (order(operation(c)), c.clone()));
    for consequence in consequences {
        let at = cause_of(&consequence, &causes);
        causes[at].consequences.push(consequence);
    }
    for cause in &mut causes {
        cause
            .consequences
            .sort_by_key(|c| (c.kind, order(operation(c)), c.clone()));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(kind: FindingKind, subject: &str, message: &str) -> Finding {
        Finding {
            kind,
            subject: subject.into(),
            path: None,
            before: None,
            after: None,
            message: message.into(),
            consequences: Vec::new(),
        }
    }

    #[test]
    fn a_missing_field_leads_and_what_followed_sits_under_it() {
        let grouped = group(vec![
            f(
                FindingKind::VerdictWorse,
                "verdict",
                "verdict: PASSED before, FAILED now",
            ),
            f(
                FindingKind::RequirementNoLongerMet,
                "ledger",
                "ledger: subscription no longer met",
            ),
            f(
                FindingKind::OperationGone,
                "subscription",
                "subscription: sent before, not sent now",
            ),
            f(
                FindingKind::ReadFieldMissing,
                "quote",
                "quote: field $.data.id …",
            ),
            f(
                FindingKind::RequirementNoLongerMet,
                "ledger",
                "ledger: quote no longer met",
            ),
        ]);
        assert_eq!(grouped.len(), 1, "{grouped:#?}");
        assert_eq!(grouped[0].kind, FindingKind::ReadFieldMissing);
        let under: Vec<FindingKind> = grouped[0].consequences.iter().map(|c| c.kind).collect();
        assert_eq!(
            under,
            [
                FindingKind::VerdictWorse,
                FindingKind::RequirementNoLongerMet,
                FindingKind::RequirementNoLongerMet,
                FindingKind::OperationGone
            ]
        );
    }

    #[test]
    fn a_requirement_goes_under_the_failure_of_its_own_operation() {
        let grouped = group(vec![
            f(FindingKind::SuccessNowError, "quote", "quote: failed"),
            f(FindingKind::SuccessNowError, "claim", "claim: failed"),
            f(
                FindingKind::RequirementNoLongerMet,
                "ledger",
                "ledger: claim no longer met",
            ),
        ]);
        assert_eq!(grouped.len(), 2);
        assert_eq!(grouped[0].subject, "quote");
        assert!(grouped[0].consequences.is_empty());
        assert_eq!(grouped[1].consequences.len(), 1);
    }

    #[test]
    fn without_a_cause_consequences_stand_alone() {
        let alone = vec![f(FindingKind::OperationGone, "claim", "claim: gone")];
        assert_eq!(group(alone.clone()), alone);
    }
}

//! Two profiles compared: each difference a finding, ranked a regression (something a
//! partner's release may not ship with) or another change. The rules are in docs/drift.md.

use std::collections::BTreeSet;

use super::profile::{OpKey, OpProfile, Profile};
use crate::evidence::baseline::{BundleRef, Drift, Finding, FindingKind};
use crate::evidence::{RequirementResult, Verdict};

/// What `ppcert diff --json` prints for one pair: the drift and which bundle is the new one.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Compared {
    #[serde(flatten)]
    pub drift: Drift,
    pub new: BundleRef,
}

/// A latency shift is reported when a percentile grew by more than this share of its base...
pub(crate) const LATENCY_GROWTH_PERCENT: u64 = 50;
/// ...and by more than this many milliseconds (small answers jitter by more than 50%).
pub(crate) const LATENCY_GROWTH_MS: u64 = 100;

/// Collects findings, sorting each into regressions or changes by its kind.
#[derive(Default)]
struct Findings {
    regressions: Vec<Finding>,
    changes: Vec<Finding>,
}

impl Findings {
    fn push(&mut self, regression: bool, finding: Finding) {
        if regression {
            self.regressions.push(finding);
        } else {
            self.changes.push(finding);
        }
    }
}

fn finding(kind: FindingKind, subject: &str, message: String) -> Finding {
    Finding {
        kind,
        subject: subject.to_string(),
        path: None,
        before: None,
        after: None,
        message,
        consequences: Vec::new(),
    }
}

fn before_after(mut finding: Finding, before: String, after: String) -> Finding {
    finding.before = Some(before);
    finding.after = Some(after);
    finding
}

/// How NEW differs from BASE.
pub(crate) fn compare(base: &Profile, new: &Profile) -> Drift {
    let mut found = Findings::default();
    verdict(base.verdict, new.verdict, &mut found);
    ledger(base, new, &mut found);
    for (key, before) in &base.operations {
        match new.operations.get(key) {
            Some(after) => operation(key, before, after, &mut found),
            // An operation that succeeded before and was not sent at all: nothing vouches for it.
            None if before.succeeded > 0 && !key.negative => found.push(
                true,
                finding(
                    FindingKind::OperationGone,
                    &key.label(),
                    format!("{}: sent before, not sent now", key.label()),
                ),
            ),
            None => found.push(
                false,
                finding(
                    FindingKind::OperationGone,
                    &key.label(),
                    format!("{}: sent before, not sent now", key.label()),
                ),
            ),
        }
    }
    for key in new.operations.keys() {
        if !base.operations.contains_key(key) {
            let message = format!("{}: sent now, not before", key.label());
            found.push(
                false,
                finding(FindingKind::OperationNew, &key.label(), message),
            );
        }
    }
    sets(base, new, &mut found);
    found.regressions.sort();
    found.changes.sort();
    Drift {
        base: base.bundle.clone(),
        regressions: super::causes::group(found.regressions),
        changes: found.changes,
        accepted: false,
    }
}

fn rank(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::Passed => 2,
        Verdict::Failed => 1,
        Verdict::Incomplete => 0,
    }
}

fn verdict(before: Verdict, after: Verdict, found: &mut Findings) {
    if before == after {
        return;
    }
    let worse = rank(after) < rank(before);
    let kind = if worse {
        FindingKind::VerdictWorse
    } else {
        FindingKind::VerdictBetter
    };
    let message = format!("verdict: {} before, {} now", before.word(), after.word());
    let f = before_after(
        finding(kind, "verdict", message),
        before.word().into(),
        after.word().into(),
    );
    found.push(worse, f);
}

fn ledger(base: &Profile, new: &Profile, found: &mut Findings) {
    for before in &base.requirements {
        let name = before.operation.as_str();
        let Some(after) = new
            .requirements
            .iter()
            .find(|r| r.operation == before.operation)
        else {
            let message = format!("ledger: {name} was required before, not now");
            found.push(
                false,
                finding(FindingKind::RequirementChanged, "ledger", message),
            );
            continue;
        };
        requirement(before, after, found);
    }
    for after in &new.requirements {
        if !base
            .requirements
            .iter()
            .any(|r| r.operation == after.operation)
        {
            let message = format!(
                "ledger: {} is required now, not before",
                after.operation.as_str()
            );
            found.push(
                false,
                finding(FindingKind::RequirementChanged, "ledger", message),
            );
        }
    }
}

/// One requirement of both runs: no longer met (worse), now met, or a changed count.
fn requirement(before: &RequirementResult, after: &RequirementResult, found: &mut Findings) {
    let name = before.operation.as_str();
    let counts = |r: &RequirementResult| {
        format!(
            "{}/{} {}",
            r.succeeded,
            r.required,
            if r.met { "met" } else { "not met" }
        )
    };
    let f = |kind, message| {
        before_after(
            finding(kind, "ledger", message),
            counts(before),
            counts(after),
        )
    };
    if before.met && !after.met {
        let message = format!(
            "ledger: {name} no longer met ({} of {} required succeeded)",
            after.succeeded, after.required
        );
        found.push(true, f(FindingKind::RequirementNoLongerMet, message));
    } else if !before.met && after.met {
        found.push(
            false,
            f(
                FindingKind::RequirementNowMet,
                format!("ledger: {name} now met"),
            ),
        );
    } else if before.required != after.required {
        let message = format!(
            "ledger: {name} requires {} now, {} before",
            after.required, before.required
        );
        found.push(false, f(FindingKind::RequirementChanged, message));
    }
}

fn join<T: std::fmt::Display>(set: &BTreeSet<T>) -> String {
    let items: Vec<String> = set.iter().map(ToString::to_string).collect();
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

fn operation(key: &OpKey, before: &OpProfile, after: &OpProfile, found: &mut Findings) {
    let label = key.label();
    statuses(&label, key, before, after, found);
    super::fields::fields(&label, before, after, found_sink(found));
    if before.errors != after.errors && (key.negative || !after.errors.is_empty()) {
        let gone: BTreeSet<_> = before.errors.difference(&after.errors).collect();
        let new: BTreeSet<_> = after.errors.difference(&before.errors).collect();
        let message = format!(
            "{label}: the server's refusals changed (before only: {}; now only: {})",
            join(&gone),
            join(&new)
        );
        let f = before_after(
            finding(FindingKind::ErrorChanged, &label, message),
            join(&before.errors),
            join(&after.errors),
        );
        found.push(false, f);
    }
    latency(&label, before, after, found);
}

/// A closure the field comparison reports through, so it needs no access to `Findings`.
fn found_sink(found: &mut Findings) -> impl FnMut(bool, Finding) + '_ {
    move |regression, finding| found.push(regression, finding)
}

fn statuses(label: &str, key: &OpKey, before: &OpProfile, after: &OpProfile, found: &mut Findings) {
    let newly_failing = !key.negative && before.failed == 0 && after.failed > 0;
    if newly_failing {
        let message = format!(
            "{label}: succeeded every time before, failed {} time(s) now (statuses now: {})",
            after.failed,
            join(&after.statuses)
        );
        let f = before_after(
            finding(FindingKind::SuccessNowError, label, message),
            join(&before.statuses),
            join(&after.statuses),
        );
        found.push(true, f);
    } else if before.statuses != after.statuses && !after.statuses.is_empty() {
        let message = format!(
            "{label}: HTTP status {} before, {} now",
            join(&before.statuses),
            join(&after.statuses)
        );
        let f = before_after(
            finding(FindingKind::StatusChanged, label, message),
            join(&before.statuses),
            join(&after.statuses),
        );
        found.push(true, f);
    }
}

fn latency(label: &str, before: &OpProfile, after: &OpProfile, found: &mut Findings) {
    for (name, percent) in [("p50", 50), ("p95", 95)] {
        let (was, is) = (before.percentile(percent), after.percentile(percent));
        let grew = is.saturating_sub(was);
        if grew > LATENCY_GROWTH_MS && grew * 100 > was * LATENCY_GROWTH_PERCENT {
            let message = format!("{label}: latency {name} {was} ms before, {is} ms now");
            let mut f = finding(FindingKind::LatencyShift, label, message);
            f.path = Some(name.into());
            found.push(
                false,
                before_after(f, format!("{was} ms"), format!("{is} ms")),
            );
        }
    }
}

fn sets(base: &Profile, new: &Profile, found: &mut Findings) {
    for warning in new.warnings.difference(&base.warnings) {
        let message = format!("warning now: {warning}");
        found.push(
            false,
            finding(FindingKind::WarningAdded, "warnings", message),
        );
    }
    for warning in base.warnings.difference(&new.warnings) {
        let message = format!("warning gone: {warning}");
        found.push(
            false,
            finding(FindingKind::WarningGone, "warnings", message),
        );
    }
    if base.claim_statuses != new.claim_statuses && !base.claim_statuses.is_empty() {
        let message = format!(
            "claims: statuses seen {} before, {} now",
            join(&base.claim_statuses),
            join(&new.claim_statuses)
        );
        let f = finding(FindingKind::ClaimStatuses, "claims", message);
        let f = before_after(f, join(&base.claim_statuses), join(&new.claim_statuses));
        found.push(false, f);
    }
    if let (Some(before), Some(after)) = (&base.webhooks, &new.webhooks)
        && before != after
    {
        let message = format!(
            "webhooks: deliveries {} before, {} now",
            join(before),
            join(after)
        );
        let f = before_after(
            finding(FindingKind::Webhooks, "webhooks", message),
            join(before),
            join(after),
        );
        found.push(false, f);
    }
}

//! What a finished run says on stdout: the verdict, the ledger, why it did not pass and where
//! the bundle is, or the same as one JSON object (`--json`).

use super::mode::OutputMode;
use crate::console::counted;
use crate::console::printable;
use crate::evidence::{Evidence, Verdict};

/// The summary on stdout: verdict, ledger, where the bundle is.
pub(crate) fn summary(mode: &OutputMode, evidence: &Evidence, bundle: &std::path::Path) -> String {
    let verdict = match evidence.verdict {
        Verdict::Passed => mode.paint("PASSED", "1;32"),
        Verdict::Failed => mode.paint("FAILED", "1;31"),
        Verdict::Incomplete => mode.paint("INCOMPLETE", "1;33"),
    };
    let mut out = format!(
        "ppcert {} — scenario {} — verdict {verdict}\n\n",
        evidence.run.id, evidence.run.scenario
    );
    out.push_str(&ledger_table(mode, evidence));
    out.push_str(&flows_not_completed(evidence));
    for warning in evidence.warnings.iter().take(SHOWN) {
        let warning = printable(warning);
        out.push_str(&format!("{} {warning}\n", mode.paint("warning:", "33")));
    }
    out.push_str(&left_out(evidence.warning_count(), "warnings"));
    if let Some(notice) = &evidence.run.notice {
        out.push_str(&format!("\n{} {notice}\n", mode.paint("note:", "33")));
    }
    // Before the bundle's path: the one-line summary stays the last line, for scripts.
    if let Some(why) = why_not_passed(evidence) {
        out.push_str(&format!("\n{why}\n"));
    }
    if let Some(next) = crate::evidence::hints::next_step(evidence) {
        out.push_str(&format!("\n{} {next}\n", mode.paint("next:", "1")));
    }
    out.push_str(&format!("\nevidence bundle: {}\n", bundle.display()));
    out.push_str(&one_line(evidence));
    out
}

/// The requirement ledger, a row per operation, its "met" column colored.
fn ledger_table(mode: &OutputMode, evidence: &Evidence) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<22} {:>8} {:>9} {:>6} {:>11}  met\n",
        "operation", "required", "succeeded", "failed", "unconfirmed"
    ));
    for r in &evidence.requirements {
        let met = if r.met {
            mode.paint("yes", "32")
        } else {
            mode.paint("NO", "31")
        };
        out.push_str(&format!(
            "{:<22} {:>8} {:>9} {:>6} {:>11}  {met}\n",
            r.operation.as_str(),
            r.required,
            r.succeeded,
            r.failed,
            r.unconfirmed
        ));
    }
    out
}

/// The flows that did not complete, those failing for one reason on one line.
fn flows_not_completed(evidence: &Evidence) -> String {
    let mut out = String::new();
    let failed: Vec<_> = evidence
        .flows
        .iter()
        .filter(|f| f.reason.is_some())
        .collect();
    if !failed.is_empty() {
        out.push_str(&format!(
            "\n{} did not complete:\n",
            counted(failed.len(), "flow", "flows")
        ));
        let reasons = grouped(
            failed
                .iter()
                .map(|f| (f.label.as_str(), f.reason.as_deref().unwrap_or_default())),
        );
        for (labels, reason) in reasons.iter().take(SHOWN) {
            out.push_str(&format!("  {}: {}\n", labels, printable(reason)));
        }
        out.push_str(&left_out(reasons.len(), "reasons"));
    }
    out
}

/// Why the verdict is not PASSED, in one line, so the table above is never left to contradict
/// it (every row "yes" and still FAILED).
pub(crate) fn why_not_passed(evidence: &Evidence) -> Option<String> {
    let short: Vec<String> = evidence
        .requirements
        .iter()
        .filter(|r| !r.met)
        .map(|r| format!("{} {}/{}", r.operation.as_str(), r.succeeded, r.required))
        .collect();
    let incomplete = evidence.flows.iter().filter(|f| f.reason.is_some()).count();
    match evidence.verdict {
        Verdict::Passed => None,
        Verdict::Incomplete => Some(
            "not passed: the run did not end on its own (interrupted), so it is incomplete".into(),
        ),
        Verdict::Failed if !short.is_empty() => Some(format!(
            "not passed: {} not met ({})",
            counted(short.len(), "requirement", "requirements"),
            short.join(", ")
        )),
        Verdict::Failed if incomplete > 0 => Some(format!(
            "not passed: every requirement is met, but {} did not complete",
            counted(incomplete, "flow", "flows")
        )),
        Verdict::Failed => Some(
            "not passed: every requirement is met, but a request broke a rule of the spec or a step failed (report.md lists the failures)".into(),
        ),
    }
}

/// How many items a list shows before it says how many it left out.
const SHOWN: usize = 10;

/// Flows that failed for the same reason on one line (`lifecycle#1, lifecycle#2 and 2 more:
/// ...`), in the order the reasons first appear: a dead target is one line, not thirteen.
fn grouped<'a>(failed: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(String, &'a str)> {
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for (label, reason) in failed {
        match groups.iter_mut().find(|(_, r)| *r == reason) {
            Some((labels, _)) => labels.push(label),
            None => groups.push((vec![label], reason)),
        }
    }
    groups
        .into_iter()
        .map(|(labels, reason)| {
            let named = labels
                .iter()
                .take(3)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            let more = labels.len().saturating_sub(3);
            let labels = if more > 0 {
                format!("{named} and {more} more")
            } else {
                named
            };
            (labels, reason)
        })
        .collect()
}

fn left_out(total: usize, what: &str) -> String {
    if total > SHOWN {
        format!(
            "  … and {} more {what} (all in report.html)\n",
            total - SHOWN
        )
    } else {
        String::new()
    }
}

/// Met required operations out of all required, counting each requirement up to its number
/// (the `resilience` row counts faults, not operations: it has its own row and testcase).
fn required_met(evidence: &Evidence) -> (u32, u32) {
    let operations = (evidence.requirements.iter()).filter(|r| r.operation.operation().is_some());
    operations.fold((0, 0), |(met, of), r| {
        (met + r.succeeded.min(r.required), of + r.required)
    })
}

fn seconds(evidence: &Evidence) -> f64 {
    match evidence.run.finished_at {
        Some(end) => (end.millis() - evidence.run.started_at.millis()).max(0) as f64 / 1000.0,
        None => 0.0,
    }
}

/// `49 exchanges, 28/28 required operations, verdict PASSED, 0.6 s`
pub(crate) fn one_line(evidence: &Evidence) -> String {
    let (met, of) = required_met(evidence);
    format!(
        "{}, {met}/{of} required operations, verdict {}, {:.1} s",
        counted(evidence.exchange_count(), "exchange", "exchanges"),
        evidence.verdict.word(),
        seconds(evidence)
    )
}

/// `--json`: the summary as one JSON object, for scripts.
pub(crate) fn summary_json(evidence: &Evidence, bundle: &std::path::Path, exit_code: u8) -> String {
    let (met, of) = required_met(evidence);
    serde_json::json!({
        "run_id": evidence.run.id,
        "scenario": evidence.run.scenario,
        "verdict": evidence.verdict,
        "exit_code": exit_code,
        "exchanges": evidence.exchange_count(),
        "required_operations": {"met": met, "of": of},
        "requirements": evidence.requirements,
        "seconds": seconds(evidence),
        "sandbox": evidence.run.target.sandbox,
        "bundle": bundle.display().to_string(),
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_failing_for_one_reason_share_a_line_in_first_seen_order() {
        let failed = [
            ("lifecycle#1", "no answer"),
            ("lifecycle#2", "HTTP 400"),
            ("lifecycle#3", "no answer"),
            ("lifecycle#4", "no answer"),
            ("lifecycle#5", "no answer"),
        ];
        let lines = grouped(failed.into_iter());
        assert_eq!(
            lines,
            vec![
                (
                    "lifecycle#1, lifecycle#3, lifecycle#4 and 1 more".to_string(),
                    "no answer"
                ),
                ("lifecycle#2".to_string(), "HTTP 400"),
            ]
        );
        assert_eq!(counted(1, "flow", "flows"), "1 flow");
        assert_eq!(counted(13, "flow", "flows"), "13 flows");
    }
}

//! `ctrf.json` (`--format ctrf`): the evidence as a Common Test Report Format document, so the
//! CTRF reporters (GitHub job summaries, Slack, Teams) show a run like any test suite's: a
//! test per requirement of the ledger, one per flow, and one per regression since the baseline.

use std::io::Write;

use serde_json::{Value, json};

use crate::evidence::{Evidence, Verdict};
use crate::record::FlowStatus;

/// The CTRF specification version the document follows.
pub(crate) const SPEC_VERSION: &str = "0.0.0";

fn test(name: String, status: &str, suite: &str, message: Option<String>) -> Value {
    let mut test = json!({"name": name, "status": status, "duration": 0, "suite": [suite]});
    if let Some(message) = message {
        test["message"] = Value::String(message);
    }
    test
}

fn tests(evidence: &Evidence) -> Vec<Value> {
    let mut tests = Vec::new();
    for r in &evidence.requirements {
        let name = format!("ledger › {} {}/{}", r.operation, r.succeeded, r.required);
        let message = (!r.met).then(|| {
            format!(
                "{} of {} required succeeded ({} failed, {} unconfirmed)",
                r.succeeded, r.required, r.failed, r.unconfirmed
            )
        });
        let status = if r.met { "passed" } else { "failed" };
        tests.push(test(name, status, "ledger", message));
    }
    for flow in &evidence.flows {
        let status = match flow.status {
            FlowStatus::Completed => "passed",
            FlowStatus::Failed => "failed",
            FlowStatus::NotRun => "skipped",
            FlowStatus::Interrupted => "other",
        };
        tests.push(test(
            flow.label.clone(),
            status,
            &flow.flow,
            flow.reason.clone(),
        ));
    }
    if let Some(drift) = &evidence.baseline {
        // Accepted regressions did not fail the run: shown, skipped.
        let status = if drift.accepted { "skipped" } else { "failed" };
        for finding in &drift.regressions {
            let name = format!("baseline › {}", finding.message);
            let following: Vec<&str> = (finding.consequences.iter())
                .map(|c| c.message.as_str())
                .collect();
            let message = (!following.is_empty())
                .then(|| format!("following from it: {}", following.join("; ")));
            tests.push(test(name, status, "baseline", message));
        }
    }
    tests
}

/// The CTRF document of `evidence`.
pub(crate) fn document(evidence: &Evidence) -> Value {
    let tests = tests(evidence);
    let count = |status: &str| tests.iter().filter(|t| t["status"] == status).count();
    let start = evidence.run.started_at.millis();
    let stop = evidence
        .run
        .finished_at
        .as_ref()
        .map_or(start, |t| t.millis());
    let verdict = match evidence.verdict {
        Verdict::Passed => "passed",
        Verdict::Failed => "failed",
        Verdict::Incomplete => "incomplete",
    };
    json!({
        "reportFormat": "CTRF",
        "specVersion": SPEC_VERSION,
        "generatedBy": format!("{} {}", evidence.tool.name, evidence.tool.version),
        "results": {
            "tool": {"name": evidence.tool.name, "version": evidence.tool.version},
            "summary": {
                "tests": tests.len(),
                "passed": count("passed"),
                "failed": count("failed"),
                "skipped": count("skipped"),
                "pending": count("pending"),
                "other": count("other"),
                "start": start,
                "stop": stop,
            },
            "tests": tests,
            "extra": {
                "verdict": verdict,
                "run_id": evidence.run.id,
                "scenario": evidence.run.scenario,
                "target": evidence.run.target.base_url,
            },
        },
    })
}

pub(crate) fn write(evidence: &Evidence, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(out, &document(evidence)).map_err(std::io::Error::other)
}

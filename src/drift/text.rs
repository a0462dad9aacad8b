//! Drift for people: regressions first (each cause with what followed from it under it), then
//! other changes, one line each.

use std::fmt::Write;

use crate::evidence::baseline::{BundleRef, Drift, Finding};

fn bundle(b: &BundleRef) -> String {
    let what = if b.source == "proxy" {
        "proxy session".to_string()
    } else {
        format!("scenario {}", b.scenario)
    };
    format!(
        "{} (run {}, {what}, {})",
        b.bundle,
        b.run_id,
        b.verdict.to_uppercase()
    )
}

/// The findings as lines under a heading per rank; a sentence when there are none.
pub(crate) fn findings(out: &mut String, drift: &Drift) {
    let list = |out: &mut String, title: &str, items: &[Finding], mark: &str| {
        if !items.is_empty() {
            let _ = writeln!(out, "{title} ({}):", items.len());
            for item in items {
                let _ = writeln!(out, "  {mark} {}", item.message);
            }
        }
    };
    regressions(out, drift);
    list(out, "changes", &drift.changes, "~");
    if drift.regressions.is_empty() && drift.changes.is_empty() {
        let _ = writeln!(out, "no difference in behaviour");
    } else if drift.regressions.is_empty() {
        let _ = writeln!(out, "no regression");
    }
}

/// `ppcert diff BASE NEW` as text.
pub(crate) fn render(drift: &Drift, new: &BundleRef) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "base: {}", bundle(&drift.base));
    let _ = writeln!(out, "new:  {}", bundle(new));
    findings(&mut out, drift);
    out
}

/// The causes, each followed by its consequences indented under it.
fn regressions(out: &mut String, drift: &Drift) {
    if drift.regressions.is_empty() {
        return;
    }
    let total = drift.regression_count();
    let causes = drift.regressions.len();
    let accepted = if drift.accepted {
        ", accepted with --accept-drift"
    } else {
        ""
    };
    if total == causes {
        let _ = writeln!(out, "regressions ({total}{accepted}):");
    } else {
        let _ = writeln!(
            out,
            "regressions ({total}: {causes} cause(s), the rest following from them{accepted}):"
        );
    }
    for cause in &drift.regressions {
        let _ = writeln!(out, "  ✗ {}", cause.message);
        for consequence in &cause.consequences {
            let _ = writeln!(out, "      ↳ {}", consequence.message);
        }
    }
}

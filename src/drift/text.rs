//! Drift for people: regressions first, then other changes, one line each.

use std::fmt::Write;

use crate::evidence::baseline::{BundleRef, Drift, Finding};

fn bundle(b: &BundleRef) -> String {
    format!(
        "{} (run {}, {} {}, {})",
        b.bundle,
        b.run_id,
        b.source,
        b.scenario,
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
    list(out, "regressions", &drift.regressions, "✗");
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

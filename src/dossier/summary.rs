//! A dossier in a few lines for the console: its verdict, and each requirement with the runs
//! that prove it.

use std::path::Path;

use super::model::Dossier;

/// The verdict and the ledger, a line each.
pub(crate) fn summary(dir: &Path, dossier: &Dossier) -> Vec<String> {
    let mut lines = vec![format!(
        "dossier {}: verdict {} for partner \"{}\" against {} ({})",
        dir.display(),
        dossier.verdict.word(),
        dossier.partner.name,
        dossier.target.base_url,
        crate::console::counted(dossier.members.len(), "bundle", "bundles")
    )];
    for requirement in &dossier.requirements {
        let r = &requirement.counts;
        let by: Vec<String> = (requirement.proven_by.iter())
            .map(|p| format!("{} {}", p.run_id, p.counted))
            .collect();
        let met = if r.met { "met" } else { "NOT met" };
        lines.push(format!(
            "  {:<20} {:>3}/{:<3} {met:<7} proven by: {}",
            r.operation.as_str(),
            r.succeeded,
            r.required,
            if by.is_empty() {
                "none".into()
            } else {
                by.join(", ")
            }
        ));
    }
    lines.extend(
        dossier
            .notice
            .iter()
            .map(|notice| format!("note: {notice}")),
    );
    lines
}

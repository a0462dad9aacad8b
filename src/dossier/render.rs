//! The dossier's reports (HTML, Markdown, JUnit), rendered from `dossier.json` alone.

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use super::model::{Dossier, HELD_TO};
use crate::models::Operation;
use crate::report::Format;

/// At most this many exchange numbers are listed per bundle and requirement; the rest counted.
const LISTED: usize = 12;

#[derive(Serialize)]
struct View<'a> {
    d: &'a Dossier,
    /// `d.notice` is left out of dossier.json when there is none: here it is always defined.
    notice: Option<&'a str>,
    verdict: &'static str,
    held_to: &'static str,
    requirements: Vec<RequirementView>,
    unmet: usize,
}

#[derive(Serialize)]
struct RequirementView {
    operation: Operation,
    required: u32,
    succeeded: u32,
    failed: u32,
    unconfirmed: u32,
    met: bool,
    proofs: Vec<ProofView>,
}

#[derive(Serialize)]
struct ProofView {
    run_id: String,
    counted: u32,
    /// `3, 7, 9` or `3, 7, … and 40 more`.
    exchanges: String,
}

fn view(dossier: &Dossier) -> View<'_> {
    let requirements = (dossier.requirements.iter())
        .map(|r| RequirementView {
            operation: r.operation,
            required: r.required,
            succeeded: r.succeeded,
            failed: r.failed,
            unconfirmed: r.unconfirmed,
            met: r.met,
            proofs: (r.proven_by.iter())
                .map(|p| ProofView {
                    run_id: p.run_id.clone(),
                    counted: p.counted,
                    exchanges: listed(&p.exchanges),
                })
                .collect(),
        })
        .collect();
    View {
        d: dossier,
        notice: dossier.notice.as_deref(),
        verdict: dossier.verdict.word(),
        held_to: HELD_TO,
        requirements,
        unmet: dossier.requirements.iter().filter(|r| !r.met).count(),
    }
}

fn listed(seqs: &[u64]) -> String {
    let shown: Vec<String> = seqs.iter().take(LISTED).map(u64::to_string).collect();
    match seqs.len().saturating_sub(LISTED) {
        0 => shown.join(", "),
        more => format!("{}, … and {more} more", shown.join(", ")),
    }
}

/// A server's or partner's text made inert in a Markdown table cell.
fn md(value: String) -> String {
    value
        .replace(['\r', '\n'], " ")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "'")
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_filter("md", md);
    for (name, text) in [
        ("dossier.html.j2", include_str!("templates/dossier.html.j2")),
        ("dossier.md.j2", include_str!("templates/dossier.md.j2")),
        ("junit.xml.j2", include_str!("templates/junit.xml.j2")),
    ] {
        env.add_template(name, text)
            .expect("the dossier's templates parse");
    }
    env
}

/// The dossier's three reports: each file's name and text. Rendered before anything is
/// written, so a dossier is never left half updated by a template.
pub(crate) fn reports(dossier: &Dossier) -> std::io::Result<Vec<(&'static str, String)>> {
    let env = environment();
    let view = view(dossier);
    let value = minijinja::Value::from(minijinja::value::Serde(&view));
    let mut out = Vec::new();
    for (format, template) in [
        (Format::Html, "dossier.html.j2"),
        (Format::Md, "dossier.md.j2"),
        (Format::Junit, "junit.xml.j2"),
    ] {
        let text = env
            .get_template(template)
            .and_then(|t| t.render(&value))
            .map_err(|e| std::io::Error::other(format!("{template}: {e:#}")))?;
        out.push((format.file_name(), text));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_lists_of_exchanges_are_cut_and_counted() {
        assert_eq!(super::listed(&[1, 2]), "1, 2");
        let many: Vec<u64> = (1..=20).collect();
        assert!(super::listed(&many).ends_with("12, … and 8 more"));
    }
}

//! Rendering the reports from the evidence (HTML, Markdown, JUnit) and writing the bundle's files.

use super::files::write_atomic_with;
use super::pass::Pass;
use super::{junit, junit_listed, manifest, view};
use crate::formats::{Format, MARKDOWN};
use std::io::Write;
use std::path::Path;

use minijinja::{Environment, UndefinedBehavior};

use crate::evidence::{self, Evidence};

/// Markdown table cells: no pipe or line break may escape the cell.
/// A server's text made inert in Markdown: on one line, no table cell break, no HTML (a
/// comment would hide the rest of the job summary), no way out of a code span.
pub(crate) fn md(value: String) -> String {
    value
        .replace(['\r', '\n'], " ")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "'")
}

/// The reports' templates, compiled once per process, on first use or by [`warm`]: they were
/// compiled again for each report (both for each), a third of writing a default batch's bundle.
static ENVIRONMENT: std::sync::LazyLock<Environment<'static>> =
    std::sync::LazyLock::new(environment);

/// Compiles the reports' templates now: a run calls it on a blocking thread while its first
/// requests are in flight, so that its end only renders.
pub(crate) fn warm() {
    std::sync::LazyLock::force(&ENVIRONMENT);
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_filter("md", md);
    // Money as money: `74.90`, not `74.9`; minor units by currency (2 when unknown).
    env.add_filter("money", |amount: f64, currency: Option<String>| {
        crate::models::money::format(amount, currency.as_deref().unwrap_or("EUR"))
    });
    env.add_filter("pretty_body", |json: &str| {
        view::pretty_json(json, false).0.unwrap_or_default()
    });
    env.add_template("report.html.j2", include_str!("templates/report.html.j2"))
        .expect("the HTML template parses");
    env.add_template("report.md.j2", include_str!("templates/report.md.j2"))
        .expect("the Markdown template parses");
    env
}

fn render_template(
    name: &str,
    evidence: &Evidence,
    pass: &Pass,
    with_exchanges: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let template = ENVIRONMENT
        .get_template(name)
        .map_err(std::io::Error::other)?;
    let view = view::build(evidence, pass, with_exchanges);
    template
        .render_captured_to(minijinja::Value::from(minijinja::value::Serde(&view)), out)
        .map(|_| ())
        .map_err(|e| std::io::Error::other(format!("{name}: {e:#}")))
}

/// Writes one report; `pass` is the record's exchanges as the HTML and Markdown reports read
/// them (JUnit needs none).
fn render_with(
    format: Format,
    evidence: &Evidence,
    pass: Option<&Pass>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let (template, with_exchanges) = match format {
        Format::Html => ("report.html.j2", true),
        Format::Md => ("report.md.j2", false),
        Format::Junit if view::partner_traffic(evidence) => {
            return junit::write(evidence, &junit_listed::suites(evidence)?, out);
        }
        Format::Junit => return junit::render(evidence, out),
        Format::Ctrf => return super::ctrf::write(evidence, out),
    };
    let pass = pass.ok_or_else(|| std::io::Error::other("no pass over the exchanges"))?;
    render_template(template, evidence, pass, with_exchanges, out)
}

/// Renders `formats` into `dir` and refreshes the manifest. The exchanges are read once for
/// all of them: a record left in the journal is read from disk.
pub(crate) fn write_reports(
    dir: &Path,
    evidence: &Evidence,
    formats: &[Format],
) -> std::io::Result<()> {
    let templated = (formats.iter()).any(|f| matches!(f, Format::Html | Format::Md));
    let pass = if templated {
        Some(Pass::of(evidence)?)
    } else {
        None
    };
    // Each report on a thread of its own: they read the same record and write their own file,
    // and the run's end waits for the slowest instead of the sum. The files already there (the
    // record) are hashed for the manifest meanwhile, on the calling thread.
    let leaving: Vec<&str> = formats.iter().map(|f| f.file_name()).collect();
    let settled = manifest::settled(dir, &leaving)?;
    let known = std::thread::scope(|scope| {
        let writing: Vec<_> = (formats.iter())
            .map(|format| {
                let pass = pass.as_ref();
                scope.spawn(move || {
                    write_atomic_with(&dir.join(format.file_name()), |out| {
                        render_with(*format, evidence, pass, out)
                    })
                })
            })
            .collect();
        let known = manifest::digests_of(dir, &settled);
        (writing.into_iter()).try_for_each(|w| {
            w.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })?;
        known
    })?;
    manifest::write_known(dir, &known)
}

/// Writes `evidence.json`, every report and the manifest into `dir`. A run's own record keeps
/// its exchanges slim: evidence.json reads them whole from the journal, and the few a report
/// shows are put back whole first. A record left in the journal is read from there whole.
pub(crate) fn write_bundle(
    dir: &Path,
    evidence: &mut Evidence,
    formats: &[Format],
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_atomic_with(&dir.join(evidence::FILE_NAME), |out| {
        match &evidence.archive {
            Some(archive) => {
                serde_json::to_writer_pretty(out, &evidence::stream::Streamed { evidence, archive })
                    .map_err(std::io::Error::other)
            }
            None => serde_json::to_writer_pretty(out, evidence).map_err(std::io::Error::other),
        }
    })?;
    if evidence.in_journal.is_none() {
        return write_reports_hydrated(dir, evidence, formats);
    }
    write_reports(dir, evidence, formats)
}

/// Renders the reports of a record whose exchanges are slim (a run's own, or one `ppcert
/// report` read back): the few a report shows are put back whole from the journal first.
pub(crate) fn write_reports_hydrated(
    dir: &Path,
    evidence: &mut Evidence,
    formats: &[Format],
) -> std::io::Result<()> {
    let mut wanted = view::shown(evidence);
    wanted.extend(junit::quoted(evidence));
    evidence::stream::hydrate(evidence, &wanted)?;
    write_reports(dir, evidence, formats)
}

/// Appends the Markdown report to `$GITHUB_STEP_SUMMARY` when that is set.
pub(crate) fn append_step_summary(dir: &Path) -> std::io::Result<()> {
    let Some(summary) = crate::env::step_summary() else {
        return Ok(());
    };
    let Ok(markdown) = std::fs::read(dir.join(MARKDOWN)) else {
        return Ok(()); // --format left the Markdown report out
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(summary)?;
    std::io::Write::write_all(&mut file, &markdown)
}

#[cfg(test)]
mod tests {
    use super::md;

    #[test]
    fn server_text_cannot_break_out_of_a_markdown_table_or_code_span() {
        assert_eq!(
            md("a|b\n<!-- hide -->`x`".into()),
            "a\\|b &lt;!-- hide --&gt;'x'"
        );
    }
}

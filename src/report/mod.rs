//! The evidence bundle: `evidence.json`, the reports rendered from it alone (HTML, Markdown,
//! JUnit), and `MANIFEST.sha256` over every file.

mod failures;
mod junit;
pub mod manifest;
mod timeline;
pub mod view;

use std::io::Write;
use std::path::Path;

use minijinja::{Environment, UndefinedBehavior};

use crate::evidence::{self, Evidence};

pub const HTML: &str = "report.html";
pub const MARKDOWN: &str = "report.md";
pub const JUNIT: &str = "junit.xml";

/// A report format `ppcert report --format` and `ppcert run --format` can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Md,
    Junit,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Html, Format::Md, Format::Junit];

    /// `html`, `md`, `junit`; `json` (evidence.json, always written) is `None`.
    pub fn parse(name: &str) -> Result<Option<Format>, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "html" => Ok(Some(Format::Html)),
            "md" | "markdown" => Ok(Some(Format::Md)),
            "junit" | "xml" => Ok(Some(Format::Junit)),
            "json" => Ok(None),
            other => Err(format!(
                "unknown report format `{other}` (html, md, junit, json)"
            )),
        }
    }

    pub fn file_name(self) -> &'static str {
        match self {
            Format::Html => HTML,
            Format::Md => MARKDOWN,
            Format::Junit => JUNIT,
        }
    }
}

/// Markdown table cells: no pipe or line break may escape the cell.
/// A server's text made inert in Markdown: on one line, no table cell break, no HTML (a
/// comment would hide the rest of the job summary), no way out of a code span.
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
    with_exchanges: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let env = environment();
    let template = env.get_template(name).map_err(std::io::Error::other)?;
    let view = view::build(evidence, with_exchanges);
    template
        .render_captured_to(minijinja::Value::from(minijinja::value::Serde(&view)), out)
        .map(|_| ())
        .map_err(|e| std::io::Error::other(format!("{name}: {e:#}")))
}

/// Writes one report.
pub fn render(format: Format, evidence: &Evidence, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        Format::Html => render_template("report.html.j2", evidence, true, out),
        Format::Md => render_template("report.md.j2", evidence, false, out),
        Format::Junit => junit::render(evidence, out),
    }
}

/// Writes a file whole or not at all: a crash never leaves half a report.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Streams into `path.partial` through a buffer, then renames: large bundles are never held
/// whole in memory, and a crash never leaves half a file.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = path.with_extension("partial");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    write(&mut out)?;
    out.flush()?;
    drop(out);
    std::fs::rename(&tmp, path)
}

/// Renders `formats` into `dir` and refreshes the manifest.
pub fn write_reports(dir: &Path, evidence: &Evidence, formats: &[Format]) -> std::io::Result<()> {
    for format in formats {
        write_atomic_with(&dir.join(format.file_name()), |out| {
            render(*format, evidence, out)
        })?;
    }
    manifest::write(dir)
}

/// Writes `evidence.json`, every report and the manifest into `dir`. A run's own record keeps
/// its exchanges slim: evidence.json reads them whole from the journal, and the few a report
/// shows are put back whole first.
pub fn write_bundle(
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
    let mut wanted = view::shown(evidence);
    wanted.extend(junit::quoted(evidence));
    evidence::stream::hydrate(evidence, &wanted)?;
    write_reports(dir, evidence, formats)
}

/// Appends the Markdown report to `$GITHUB_STEP_SUMMARY` when that is set.
pub fn append_step_summary(dir: &Path) -> std::io::Result<()> {
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

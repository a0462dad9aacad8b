//! The evidence bundle: `evidence.json`, the reports rendered from it alone (HTML, Markdown,
//! JUnit), and `MANIFEST.sha256` over every file.

mod junit;
pub mod manifest;
pub mod view;

use std::path::Path;

use minijinja::{Environment, UndefinedBehavior};

use crate::evidence::{self, Evidence};

pub const HTML: &str = "report.html";
pub const MARKDOWN: &str = "report.md";
pub const JUNIT: &str = "junit.xml";

/// A report format `ppcert report --format` can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Html,
    Md,
    Junit,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Html, Format::Md, Format::Junit];

    pub fn file_name(self) -> &'static str {
        match self {
            Format::Html => HTML,
            Format::Md => MARKDOWN,
            Format::Junit => JUNIT,
        }
    }
}

/// Markdown table cells: no pipe or line break may escape the cell.
fn md(value: String) -> String {
    value.replace('|', "\\|").replace(['\r', '\n'], " ")
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.add_filter("md", md);
    env.add_template("report.html.j2", include_str!("templates/report.html.j2"))
        .expect("the HTML template parses");
    env.add_template("report.md.j2", include_str!("templates/report.md.j2"))
        .expect("the Markdown template parses");
    env
}

fn render_template(name: &str, evidence: &Evidence) -> std::io::Result<String> {
    let env = environment();
    let template = env.get_template(name).map_err(std::io::Error::other)?;
    let view = view::build(evidence);
    template
        .render(minijinja::Value::from(minijinja::value::Serde(&view)))
        .map_err(|e| std::io::Error::other(format!("{name}: {e:#}")))
}

/// One report, as bytes.
pub fn render(format: Format, evidence: &Evidence) -> std::io::Result<Vec<u8>> {
    match format {
        Format::Html => render_template("report.html.j2", evidence).map(String::into_bytes),
        Format::Md => render_template("report.md.j2", evidence).map(String::into_bytes),
        Format::Junit => junit::render(evidence),
    }
}

/// Writes a file whole or not at all: a crash never leaves half a report.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Renders `formats` into `dir` and refreshes the manifest.
pub fn write_reports(dir: &Path, evidence: &Evidence, formats: &[Format]) -> std::io::Result<()> {
    for format in formats {
        write_atomic(&dir.join(format.file_name()), &render(*format, evidence)?)?;
    }
    manifest::write(dir)
}

/// Writes `evidence.json`, every report and the manifest into `dir`.
pub fn write_bundle(dir: &Path, evidence: &Evidence) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_vec_pretty(evidence).map_err(std::io::Error::other)?;
    write_atomic(&dir.join(evidence::FILE_NAME), &json)?;
    write_reports(dir, evidence, &Format::ALL)
}

/// Appends the Markdown report to `$GITHUB_STEP_SUMMARY` when that is set.
pub fn append_step_summary(dir: &Path) -> std::io::Result<()> {
    let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let markdown = std::fs::read(dir.join(MARKDOWN))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(summary)?;
    std::io::Write::write_all(&mut file, &markdown)
}

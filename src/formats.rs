//! The report formats a run, a proxy session or `ppcert report` can write, and their file
//! names: a plain value, in a leaf, because the command line and the config name it as well as
//! the reports that render it.

pub(crate) const HTML: &str = "report.html";
pub(crate) const MARKDOWN: &str = "report.md";
pub(crate) const JUNIT: &str = "junit.xml";
pub(crate) const CTRF: &str = "ctrf.json";

/// A format name none of [`Format`] answers to (lowercased, as it was matched).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown report format `{0}` (html, md, junit, ctrf, json)")]
pub struct UnknownFormat(pub String);

/// A report format `ppcert report --format` and `ppcert run --format` can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Md,
    Junit,
    /// `ctrf.json`: a Common Test Report Format document; written only when asked for.
    Ctrf,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Html, Format::Md, Format::Junit];

    /// `html`, `md`, `junit`; `json` (evidence.json, always written) is `None`.
    pub fn parse(name: &str) -> Result<Option<Format>, UnknownFormat> {
        match name.trim().to_ascii_lowercase().as_str() {
            "html" => Ok(Some(Format::Html)),
            "md" | "markdown" => Ok(Some(Format::Md)),
            "junit" | "xml" => Ok(Some(Format::Junit)),
            "ctrf" => Ok(Some(Format::Ctrf)),
            "json" => Ok(None),
            other => Err(UnknownFormat(other.to_string())),
        }
    }

    pub fn file_name(self) -> &'static str {
        match self {
            Format::Html => HTML,
            Format::Md => MARKDOWN,
            Format::Junit => JUNIT,
            Format::Ctrf => CTRF,
        }
    }
}

//! The bundle's report files: their names, the formats that can be asked for, and writing a
//! file whole or not at all.

use std::io::Write;
use std::path::Path;

pub(crate) const HTML: &str = "report.html";
pub(crate) const MARKDOWN: &str = "report.md";
pub(crate) const JUNIT: &str = "junit.xml";

/// A format name none of [`Format`] answers to (lowercased, as it was matched).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown report format `{0}` (html, md, junit, json)")]
pub struct UnknownFormat(pub String);

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
    pub fn parse(name: &str) -> Result<Option<Format>, UnknownFormat> {
        match name.trim().to_ascii_lowercase().as_str() {
            "html" => Ok(Some(Format::Html)),
            "md" | "markdown" => Ok(Some(Format::Md)),
            "junit" | "xml" => Ok(Some(Format::Junit)),
            "json" => Ok(None),
            other => Err(UnknownFormat(other.to_string())),
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

/// Writes a file whole or not at all: a crash never leaves half a report.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Streams into `path.partial` through a buffer, then renames: large bundles are never held
/// whole in memory, and a crash never leaves half a file.
pub(crate) fn write_atomic_with(
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

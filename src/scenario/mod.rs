//! Scenarios: named flows of steps, their repeat counts, data profile and requirements, read
//! from TOML (built into the binary or from `scenarios/NAME.toml`) and checked before any request.

use std::fmt;
use std::path::{Path, PathBuf};

mod check;
mod model;

pub(crate) use check::check;
pub use model::{ErrorCase, ExpectedStatus, FlowSpec, Requirement, Scenario, Step};

/// The scenarios shipped inside the binary, by name.
pub const BUILTIN: [(&str, &str); 5] = [
    (
        "certification",
        include_str!("../../scenarios/certification.toml"),
    ),
    ("smoke", include_str!("../../scenarios/smoke.toml")),
    (
        "multi-planning",
        include_str!("../../scenarios/multi-planning.toml"),
    ),
    (
        "change-for-any-reason",
        include_str!("../../scenarios/change-for-any-reason.toml"),
    ),
    (
        "conformance",
        include_str!("../../scenarios/conformance.toml"),
    ),
];

/// A scenario with where it came from and the SHA-256 of its exact text.
#[derive(Debug, Clone)]
pub struct LoadedScenario {
    pub scenario: Scenario,
    pub source: ScenarioSource,
    pub sha256: String,
}

/// Where a scenario came from: built into the binary, or a file (as the user named it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioSource {
    BuiltIn(&'static str),
    File(String),
    /// No scenario: a partner's own traffic recorded by `ppcert proxy`.
    Proxy,
}

/// How a proxy session's record names its source.
pub(crate) const PARTNER_TRAFFIC: &str = "partner traffic through ppcert proxy";

impl fmt::Display for ScenarioSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScenarioSource::BuiltIn(name) => write!(f, "<built-in {name}>"),
            ScenarioSource::File(path) => f.write_str(path),
            ScenarioSource::Proxy => f.write_str(PARTNER_TRAFFIC),
        }
    }
}

impl ScenarioSource {
    /// Reads back what [`fmt::Display`] wrote (an evidence's `scenario_source`).
    pub(crate) fn parse(recorded: &str) -> ScenarioSource {
        if recorded == PARTNER_TRAFFIC {
            return ScenarioSource::Proxy;
        }
        recorded
            .strip_prefix("<built-in ")
            .and_then(|rest| rest.strip_suffix('>'))
            .and_then(|name| BUILTIN.iter().find(|(n, _)| *n == name))
            .map_or_else(
                || ScenarioSource::File(recorded.to_string()),
                |(name, _)| ScenarioSource::BuiltIn(name),
            )
    }

    /// What `--scenario` takes to load it again.
    pub(crate) fn name_or_path(&self) -> &str {
        match self {
            ScenarioSource::BuiltIn(name) => name,
            ScenarioSource::File(path) => path,
            ScenarioSource::Proxy => PARTNER_TRAFFIC,
        }
    }
}

/// A scenario built into the binary, by name.
pub(crate) fn builtin(name: &'static str, text: &str) -> Result<LoadedScenario, FileError> {
    parse_from(ScenarioSource::BuiltIn(name), text)
}

/// A problem in a file, located as precisely as the parser allows.
#[derive(Debug, Clone, PartialEq)]
pub struct FileError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

impl std::error::Error for FileError {}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// 1-based line of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Turns a TOML error into "file:line: column C: message".
pub(crate) fn toml_error(file: &str, text: &str, err: &toml::de::Error) -> FileError {
    let message = err.message().to_string();
    match err.span() {
        Some(span) => {
            let line = line_of(text, span.start);
            let line_start = text[..span.start.min(text.len())]
                .rfind('\n')
                .map_or(0, |i| i + 1);
            let column = text[line_start..span.start.min(text.len())].chars().count() + 1;
            FileError {
                file: file.into(),
                line: Some(line),
                message: format!("column {column}: {message}"),
            }
        }
        None => FileError {
            file: file.into(),
            line: None,
            message,
        },
    }
}

/// Parses and checks a scenario file's text.
pub fn parse(file: &str, text: &str) -> Result<LoadedScenario, FileError> {
    parse_from(ScenarioSource::File(file.to_string()), text)
}

fn parse_from(source: ScenarioSource, text: &str) -> Result<LoadedScenario, FileError> {
    let file = source.to_string();
    let file = file.as_str();
    let scenario: Scenario = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
    check(&scenario).map_err(|e| FileError {
        file: file.into(),
        line: (e.flow().and_then(|f| flow_line(text, f)))
            .or_else(|| e.key().and_then(|key| key_line(text, key))),
        message: e.to_string(),
    })?;
    Ok(LoadedScenario {
        scenario,
        source,
        sha256: crate::digest::sha256_hex(text.as_bytes()),
    })
}

fn key_line(text: &str, key: &str) -> Option<usize> {
    (text.lines())
        .position(|l| l.trim_start().starts_with(key))
        .map(|i| i + 1)
}

fn flow_line(text: &str, flow: &str) -> Option<usize> {
    let needle = format!("\"{flow}\"");
    text.lines()
        .position(|l| l.trim_start().starts_with("name") && l.contains(&needle))
        .map(|i| i + 1)
}

/// Where `--scenario NAME|PATH` points.
pub(crate) fn resolve(name_or_path: &str, dir: &Path) -> Result<LoadedScenario, FileError> {
    let as_path = PathBuf::from(name_or_path);
    let local = dir.join("scenarios").join(format!("{name_or_path}.toml"));
    let file = if name_or_path.ends_with(".toml") || as_path.components().count() > 1 {
        Some(as_path)
    } else {
        local.is_file().then_some(local)
    };
    if let Some(file) = file {
        let (shown, text) = read_text(&file)?;
        return parse(&shown, &text);
    }
    builtin_named(name_or_path)
}

/// A user's file as shown in messages, and its text; unreadable is an error naming it.
pub(crate) fn read_text(path: &Path) -> Result<(String, String), FileError> {
    let shown = path.display().to_string();
    match crate::bounds::read_text_capped(path, crate::bounds::TEXT_FILE_BYTES) {
        Ok(text) => Ok((shown, text)),
        Err(e) => Err(FileError {
            file: shown,
            line: None,
            message: format!("cannot read: {e}"),
        }),
    }
}

/// The scenario of that name built into this binary.
pub(crate) fn builtin_named(wanted: &str) -> Result<LoadedScenario, FileError> {
    let (name, text) = BUILTIN
        .iter()
        .find(|(name, _)| *name == wanted)
        .ok_or_else(|| FileError {
            file: wanted.to_string(),
            line: None,
            message: format!(
                "no scenario of that name{} (built in: {})",
                BUILTIN
                    .iter()
                    .map(|(n, _)| (strsim::levenshtein(n, wanted), *n))
                    .filter(|(distance, _)| *distance <= 3)
                    .min()
                    .map(|(_, n)| format!("; did you mean `{n}`?"))
                    .unwrap_or_default(),
                BUILTIN.map(|(n, _)| n).join(", ")
            ),
        })?;
    builtin(name, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_source_reads_back_what_it_wrote() {
        for source in [
            ScenarioSource::BuiltIn("certification"),
            ScenarioSource::File("scenarios/mine.toml".into()),
            ScenarioSource::File("<built-in nothing-of-that-name>".into()),
        ] {
            assert_eq!(ScenarioSource::parse(&source.to_string()), source);
        }
        assert_eq!(ScenarioSource::BuiltIn("smoke").name_or_path(), "smoke");
    }

    #[test]
    fn every_builtin_scenario_parses_and_checks() {
        for (name, text) in BUILTIN {
            let loaded = parse(name, text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(loaded.scenario.name, name);
        }
    }

    #[test]
    fn a_claim_without_a_contract_read_names_flow_and_line() {
        let text = "name = \"x\"\ndescription = \"d\"\n\n[[flows]]\nname = \"f\"\nsteps = [{ action = \"quote\" }, { action = \"subscribe\" }, { action = \"claim\" }]\n";
        let err = parse("x.toml", text).unwrap_err();
        assert_eq!(err.line, Some(5));
        assert!(
            err.message
                .contains("step 3 (`claim`) needs a `read_contracts`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn unknown_field_names_line_and_column() {
        let text = "name = \"x\"\ndescription = \"d\"\nflows = []\nsurprise = 1\n";
        let err = parse("x.toml", text).unwrap_err();
        assert_eq!(err.line, Some(4));
        assert!(
            err.message.contains("column 1") && err.message.contains("surprise"),
            "{}",
            err.message
        );
    }
}

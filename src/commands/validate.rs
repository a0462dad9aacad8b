//! `ppcert validate` and `ppcert scenarios`: check files without sending a request, and list
//! the scenarios found.

use std::path::{Path, PathBuf};

use crate::cli::ValidateArgs;
use crate::config;
use crate::error::Failure;
use crate::exit_codes;
use crate::scenario::{self, LoadedScenario};

/// Why a file given to `validate` is not valid.
#[derive(Debug, thiserror::Error)]
enum Invalid {
    #[error("{shown}: cannot read: {source}")]
    Unreadable {
        shown: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Scenario(scenario::FileError),
    #[error(transparent)]
    Config(config::FileErrors),
}

/// Scenario files have flows; anything else is read as a `ppcert.toml`.
fn check_file(path: &Path) -> Result<String, Invalid> {
    let shown = path.display().to_string();
    let text = crate::bounds::read_text_capped(path, crate::bounds::TEXT_FILE_BYTES).map_err(
        |source| Invalid::Unreadable {
            shown: shown.clone(),
            source,
        },
    )?;
    let is_scenario = text
        .parse::<toml::Table>()
        .map(|t| t.contains_key("flows"))
        .unwrap_or(false);
    if is_scenario {
        let loaded = scenario::parse(&shown, &text).map_err(Invalid::Scenario)?;
        Ok(format!("{shown}: scenario `{}` ok", loaded.scenario.name))
    } else {
        let parsed = config::parse_file(&shown, &text).map_err(Invalid::Config)?;
        pattern_gives_the_batch(&shown, &text, &parsed).map_err(Invalid::Scenario)?;
        Ok(format!("{shown}: config ok"))
    }
}

/// A `ppcert.toml`'s booking-number pattern gives the default batch's bookings (`run` checks
/// again against its own scenario and scale).
fn pattern_gives_the_batch(
    shown: &str,
    text: &str,
    parsed: &config::FileConfig,
) -> Result<(), scenario::FileError> {
    let Some(pattern) = &parsed.data.booking_number_pattern else {
        return Ok(());
    };
    let batch = scenario::builtin_named(config::DEFAULT_SCENARIO)?.scenario;
    let bookings = batch.flows.iter().map(|f| u64::from(f.repeat)).sum();
    crate::datagen::numbers::draw(pattern, 0, bookings)
        .map(drop)
        .map_err(|why| scenario::FileError {
            file: shown.to_string(),
            line: (text.lines())
                .position(|l| l.trim_start().starts_with("booking_number_pattern"))
                .map(|i| i + 1),
            message: format!(
                "data.booking_number_pattern: {why} (the default `{}` batch)",
                config::DEFAULT_SCENARIO
            ),
        })
}

fn local_scenarios() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("scenarios")
        .map(|dir| {
            dir.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

pub(crate) fn validate(args: ValidateArgs) -> Result<u8, Failure> {
    let mut files = args.files;
    if files.is_empty() {
        if Path::new(config::DEFAULT_CONFIG).is_file() {
            files.push(PathBuf::from(config::DEFAULT_CONFIG));
        }
        files.extend(local_scenarios());
        for (name, text) in scenario::BUILTIN {
            match scenario::builtin(name, text) {
                Ok(loaded) => crate::console::say!("{}: scenario ok", loaded.source),
                Err(e) => return Err(e.into()),
            }
        }
    }
    let mut failed = 0;
    for file in &files {
        match check_file(file) {
            Ok(line) => crate::console::say!("{line}"),
            Err(line) => {
                crate::console::tell!("error: {line}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Err(Failure::Invalid {
            failed,
            files: files.len(),
        });
    }
    Ok(exit_codes::SUCCESS)
}

fn describe(loaded: &LoadedScenario) -> String {
    let s = &loaded.scenario;
    let requirements: Vec<String> = s
        .requirements
        .iter()
        .map(|r| {
            format!(
                "{} >= {}{}",
                r.operation,
                r.required,
                if r.flight_sellers_only {
                    " (flight sellers)"
                } else {
                    ""
                }
            )
        })
        .collect();
    let flows: Vec<String> = s
        .flows
        .iter()
        .map(|f| format!("{} x{}", f.name, f.repeat))
        .collect();
    format!(
        "{}\n    {}\n    flows: {}\n    requires: {}\n    from: {}\n",
        s.name,
        s.description,
        flows.join(", "),
        if requirements.is_empty() {
            "every step passing".to_string()
        } else {
            requirements.join(", ")
        },
        loaded.source
    )
}

pub(crate) fn scenarios() -> Result<u8, Failure> {
    let mut seen = Vec::new();
    for file in local_scenarios() {
        match crate::bounds::read_text_capped(&file, crate::bounds::TEXT_FILE_BYTES)
            .map_err(|e| e.to_string())
            .and_then(|t| {
                scenario::parse(&file.display().to_string(), &t).map_err(|e| e.to_string())
            }) {
            Ok(loaded) => {
                seen.push(loaded.scenario.name.clone());
                crate::console::say!("{}", describe(&loaded));
            }
            Err(e) => crate::console::tell!("error: {e}"),
        }
    }
    for (name, text) in scenario::BUILTIN {
        if !seen.iter().any(|s| s == name)
            && let Ok(loaded) = scenario::builtin(name, text)
        {
            crate::console::say!("{}", describe(&loaded));
        }
    }
    Ok(exit_codes::SUCCESS)
}

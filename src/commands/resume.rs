//! `ppcert run --resume`: read an interrupted run's journal back, so the run continues where
//! it stopped instead of sending again what the server already holds.

use std::path::Path;

use crate::config::RunConfig;
use crate::error::Failure;
use crate::evidence::{RunInfo, TargetInfo};
use crate::journal::{self, Line};
use crate::record::{Exchange, StepEvent};
use crate::scenario;
use crate::secret::Secret;

/// A journal to continue: what was recorded and who the run was.
pub struct Previous {
    pub run: RunInfo,
    pub exchanges: Vec<Exchange>,
    pub steps: Vec<StepEvent>,
    pub started: Vec<(String, usize)>,
}

impl Previous {
    /// The run record to continue under: the same run, now reached at `base_url` with `token`.
    pub fn continued_run(&self, base_url: &str, token: &Secret) -> RunInfo {
        RunInfo {
            target: TargetInfo {
                base_url: base_url.to_string(),
                ..self.run.target.clone()
            },
            token_fingerprint: token.fingerprint(),
            ..self.run.clone()
        }
    }
}

/// Reads the journal in `dir` and points `config` at the scenario it ran, refusing a run that
/// cannot be continued faithfully.
pub fn read_previous(dir: &Path, config: &mut RunConfig) -> Result<Previous, Failure> {
    let lines = journal::read(&dir.join(journal::FILE_NAME)).map_err(Failure::usage)?;
    let mut previous: Option<Previous> = None;
    for line in lines {
        match (line, previous.as_mut()) {
            (Line::Run { run }, None) => {
                let run: RunInfo = serde_json::from_value(run).map_err(|e| {
                    Failure::usage(format!(
                        "{}: the run line is unreadable: {e}",
                        dir.display()
                    ))
                })?;
                previous = Some(Previous {
                    run,
                    exchanges: Vec::new(),
                    steps: Vec::new(),
                    started: Vec::new(),
                });
            }
            (Line::Exchange(exchange), Some(p)) => p.exchanges.push(*exchange),
            (Line::Step(step), Some(p)) => p.steps.push(step),
            (Line::StepStarted { flow, step_index }, Some(p)) => p.started.push((flow, step_index)),
            _ => {}
        }
    }
    let previous = previous.ok_or_else(|| {
        Failure::usage(format!(
            "{}: the journal has no run line to resume",
            dir.display()
        ))
    })?;
    if previous.run.target.embedded {
        return Err(Failure::usage(
            "--resume: that run used the embedded sandbox, whose state ended with it; start a new run instead",
        ));
    }
    let name = previous
        .run
        .scenario_source
        .strip_prefix("<built-in ")
        .and_then(|s| s.strip_suffix('>'))
        .unwrap_or(&previous.run.scenario_source);
    let scenario = scenario::resolve(name, Path::new(".")).map_err(Failure::usage)?;
    if scenario.sha256 != previous.run.scenario_sha256 {
        return Err(Failure::usage(format!(
            "--resume: scenario `{name}` changed since the run started (SHA-256 {} then, {} now)",
            previous.run.scenario_sha256, scenario.sha256
        )));
    }
    config.scenario = scenario;
    Ok(previous)
}

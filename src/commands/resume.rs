//! `ppcert run --resume`: read an interrupted run's journal back, so the run continues where
//! it stopped instead of sending again what the server already holds.

use std::path::Path;

use crate::config::{self, Environment, RunConfig, Target};
use crate::error::Failure;
use crate::evidence::{RunInfo, TargetInfo};
use crate::journal::{self, Line};
use crate::models::Operation;
use crate::record::{Exchange, Outcome, RequestRecord, StepEvent};
use crate::scenario;
use crate::secret::Secret;

/// A journal to continue: what was recorded and who the run was.
pub struct Previous {
    pub run: RunInfo,
    pub exchanges: Vec<Exchange>,
    pub steps: Vec<StepEvent>,
    pub started: Vec<(String, usize)>,
    /// Quotes that were in flight when the run died: the server may have made them.
    pub in_flight: Vec<Exchange>,
}

/// Writes sent (their `sending` lines) whose exchange never reached the journal.
#[derive(Default)]
struct InFlight(Vec<Line>);

impl InFlight {
    /// An exchange line settles the oldest send of the same call.
    fn retain_first_not(&mut self, exchange: &Exchange) {
        let same_call = |line: &Line| {
            matches!(line, Line::Sending { flow, step, operation, .. }
                if *flow == exchange.flow && *step == exchange.step && *operation == exchange.operation)
        };
        if let Some(i) = self.0.iter().position(same_call) {
            self.0.remove(i);
        }
    }

    /// Every other write is redone by its step, which reconciles a conflict; a quote cannot be
    /// (nothing makes quotes unique), so one that was in flight is recorded as may-have-been-
    /// made, and the ledger shows it as unconfirmed.
    fn lost_quotes(self) -> Vec<Exchange> {
        self.0
            .into_iter()
            .filter_map(|line| match line {
                Line::Sending {
                    flow,
                    step,
                    operation: Operation::Quote,
                    method,
                    url,
                    at,
                } => Some((flow, step, method, url, at)),
                _ => None,
            })
            .map(|(flow, step, method, url, at)| Exchange {
                seq: 0,
                flow,
                step,
                operation: Operation::Quote,
                booking_number: None,
                attempt: 1,
                method,
                url,
                started_at: at,
                duration_ms: 0,
                request: RequestRecord {
                    headers: Default::default(),
                    body: None,
                },
                response: None,
                outcome: Outcome::Error,
                checks: Vec::new(),
                error: Some(
                    "the run stopped while this request was in flight: the server may have processed it".into(),
                ),
                expected_error: false,
                retried: false,
                maybe_processed: true,
                reconciled: false,
                layout: None,
                reads: Vec::new(),
            })
            .collect()
    }
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
    let mut in_flight = InFlight::default();
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
                    in_flight: Vec::new(),
                });
            }
            (Line::Exchange(exchange), Some(p)) => {
                in_flight.retain_first_not(&exchange);
                p.exchanges.push(*exchange)
            }
            (sent @ Line::Sending { .. }, Some(_)) => in_flight.0.push(sent),
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
    let mut previous = previous;
    previous.in_flight = in_flight.lost_quotes();
    if previous.run.target.embedded {
        return Err(Failure::usage(
            "--resume: that run used the embedded sandbox, whose state ended with it; start a new run instead",
        ));
    }
    let source = scenario::ScenarioSource::parse(&previous.run.scenario_source);
    let name = source.name_or_path();
    let scenario = scenario::resolve(name, Path::new(".")).map_err(Failure::usage)?;
    if scenario.sha256 != previous.run.scenario_sha256 {
        return Err(Failure::usage(format!(
            "--resume: scenario `{name}` changed since the run started (SHA-256 {} then, {} now)",
            previous.run.scenario_sha256, scenario.sha256
        )));
    }
    config.scenario = scenario;
    hold_to_the_recorded_run(&previous.run, config)?;
    Ok(previous)
}

/// A resumed run goes on against the server, with the token and at the scale it started with:
/// the recorded target is used when none is given, and another one is refused, as is another
/// token (by fingerprint) or another `--scale`.
fn hold_to_the_recorded_run(run: &RunInfo, config: &mut RunConfig) -> Result<(), Failure> {
    let recorded = &run.target.base_url;
    match &config.target {
        Target::Embedded => {
            let base_url = config::parse_base_url(recorded).map_err(Failure::usage)?;
            let environment = if run.target.environment == "production" {
                Environment::Production
            } else {
                Environment::Staging
            };
            config.target = Target::Remote {
                base_url,
                environment,
            };
        }
        Target::Remote { base_url, .. } => {
            if base_url.as_str().trim_end_matches('/') != recorded.trim_end_matches('/') {
                return Err(Failure::usage(format!(
                    "--resume: the run was against {recorded}, not {base_url}; resume it against its own target (leave --base-url out)"
                )));
            }
        }
    }
    let Some(token) = &config.token else {
        return Err(Failure::usage(
            "--resume: the run needs its token again: set PPCERT_TOKEN or pass --token-file PATH",
        ));
    };
    if token.fingerprint() != run.token_fingerprint {
        return Err(Failure::usage(format!(
            "--resume: this token (fingerprint {}) is not the one the run started with ({})",
            token.fingerprint(),
            run.token_fingerprint
        )));
    }
    match config.scale {
        1 => config.scale = run.scale,
        scale if scale != run.scale => {
            return Err(Failure::usage(format!(
                "--resume: the run started at --scale {}, not {scale}",
                run.scale
            )));
        }
        _ => {}
    }
    Ok(())
}

//! `ppcert run --resume`: read an interrupted run's journal back, so the run continues where
//! it stopped instead of sending again what the server already holds.

use std::path::Path;

use std::num::NonZeroU32;

use crate::config::Recorded;
use crate::error::Failure;
use crate::evidence::{RunInfo, TargetInfo};
use crate::journal::{self, Line};
use crate::models::Operation;
use crate::record::{Exchange, Outcome, RequestRecord, StepEvent};
use crate::scenario::ScenarioSource;
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

/// Reads the journal in `dir`, refusing a run that cannot be continued faithfully.
pub fn read_previous(dir: &Path) -> Result<Previous, Failure> {
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
    let mut previous = previous.ok_or_else(|| {
        Failure::usage(format!(
            "{}: the journal has no run line to resume",
            dir.display()
        ))
    })?;
    previous.in_flight = in_flight.lost_quotes();
    if previous.run.scenario_source == super::proxy::SOURCE {
        return Err(Failure::usage(format!(
            "--resume: {} holds partner traffic recorded by ppcert proxy, not a run ppcert can continue; start the proxy again for a new session",
            dir.display()
        )));
    }
    if previous.run.target.embedded {
        return Err(Failure::usage(
            "--resume: that run used the embedded sandbox, whose state ended with it; start a new run instead",
        ));
    }
    Ok(previous)
}

impl Previous {
    /// What the config merge holds the resumed invocation to.
    pub fn recorded(&self, dir: &Path) -> Result<Recorded, Failure> {
        let run = &self.run;
        let scale = NonZeroU32::new(run.scale).ok_or_else(|| {
            Failure::usage(format!("{}: the run line records scale 0", dir.display()))
        })?;
        Ok(Recorded {
            scenario_source: ScenarioSource::parse(&run.scenario_source),
            scenario_sha256: run.scenario_sha256.clone(),
            base_url: run.target.base_url.clone(),
            environment: run.target.environment,
            token_fingerprint: run.token_fingerprint.clone(),
            scale,
            flight_seller: run.partner.flight_seller,
            dialect: run.dialect.clone(),
            seed: run.seed,
        })
    }
}

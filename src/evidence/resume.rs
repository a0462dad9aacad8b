//! An interrupted run read back from its journal for `ppcert run --resume`, so the run
//! continues where it stopped instead of sending again what the server already holds.

use std::collections::HashMap;
use std::path::Path;

use super::model::{RunInfo, TargetInfo};
use super::resume_error::ResumeError;
use crate::journal::{self, Line, ReadError};
use crate::models::Operation;
use crate::record::{
    Delivery, Exchange, Expectation, Outcome, RequestRecord, StepEvent, StepStatus,
};
use crate::scenario::ScenarioSource;

/// A journal to continue: what was recorded and who the run was.
pub(crate) struct Previous {
    pub run: RunInfo,
    pub journaled: Journaled,
    /// Each flow a line names, with the line's number and the step index it names if any:
    /// checked against the run's flows before anything is sent.
    named: Vec<(usize, String, Option<usize>)>,
}

/// What an interrupted run's journal holds, for the run that continues it.
#[derive(Default)]
pub(crate) struct Journaled {
    pub exchanges: Vec<Exchange>,
    pub steps: Vec<StepEvent>,
    pub started: Vec<(String, usize)>,
    /// Quotes that were in flight when the run died: the server may have made them.
    pub in_flight: Vec<Exchange>,
    /// Exchanges recorded after their flow's last step line: those of the step the run was
    /// in when it died (across earlier resumes too), never those of an earlier step.
    pub unsettled: Vec<Exchange>,
}

/// Each flow's exchanges since its last step line, by their place in the journal.
#[derive(Default)]
struct Unsettled(std::collections::HashMap<String, Vec<usize>>);

impl Unsettled {
    fn exchange(&mut self, flow: &str, index: usize) {
        self.0.entry(flow.to_string()).or_default().push(index);
    }

    fn step(&mut self, flow: &str) {
        self.0.remove(flow);
    }

    fn collect(self, exchanges: &[Exchange]) -> Vec<Exchange> {
        let mut indexes: Vec<usize> = self.0.into_values().flatten().collect();
        indexes.sort_unstable();
        indexes.into_iter().map(|i| exchanges[i].clone()).collect()
    }
}

/// Attempts of writes sent (their `sending` lines) whose exchange never reached the journal.
#[derive(Default)]
struct InFlight(Vec<Line>);

impl InFlight {
    /// An exchange line settles the oldest send of the same attempt of the same call. A line
    /// of an older journal names no attempt: it stands for the whole call, and only the
    /// call's final attempt settles it (a `retried` one was followed by another, which may
    /// be the one in flight).
    fn settle(&mut self, exchange: &Exchange) {
        let same_attempt = |line: &Line| match line {
            Line::Sending {
                flow,
                step,
                operation,
                attempt,
                ..
            } if *flow == exchange.flow
                && *step == exchange.step
                && *operation == exchange.operation =>
            {
                attempt.map_or(!exchange.retried, |n| n == exchange.attempt)
            }
            _ => false,
        };
        if let Some(i) = self.0.iter().position(same_attempt) {
            self.0.remove(i);
        }
    }

    /// Every other write is redone by its step, which reconciles a conflict; a quote cannot be
    /// (nothing makes quotes unique), so each attempt of one that was in flight (a retry
    /// after a 5xx included) is recorded as may-have-been-made, and the ledger shows it as
    /// unconfirmed.
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
                    attempt,
                } => Some((flow, step, method, url, at, attempt.unwrap_or(1))),
                _ => None,
            })
            .map(|(flow, step, method, url, at, attempt)| Exchange {
                seq: 0,
                flow,
                step,
                operation: Operation::Quote,
                booking_number: None,
                attempt,
                method,
                url,
                started_at: at,
                duration_ms: 0,
                request: RequestRecord {
                    headers: Default::default(),
                    body: None,
                    cut: None,
                },
                response: None,
                outcome: Outcome::Error,
                checks: Vec::new(),
                error: Some(
                    "the run stopped while this request was in flight: the server may have processed it".into(),
                ),
                expectation: Expectation::Acceptance,
                retried: false,
                delivery: Delivery::MaybeProcessed,
                layout: None,
                reads: Vec::new(),
                token_fingerprint: None,
                poll: false,
                phase: Default::default(),
            })
            .collect()
    }
}

impl Previous {
    /// The run record to continue under: the same run, now reached at `base_url` with tokens
    /// from `tokens` (the first one's fingerprint is kept; each exchange has its own).
    pub(crate) fn continued_run(
        &self,
        base_url: &str,
        token_fingerprint: String,
        token_source: String,
    ) -> RunInfo {
        RunInfo {
            target: TargetInfo {
                base_url: base_url.to_string(),
                ..self.run.target.clone()
            },
            token_fingerprint,
            token_source: Some(token_source),
            ..self.run.clone()
        }
    }
}

/// Why a journal cannot be continued: it cannot be read, or what it holds refuses it. Its
/// own error, mapped to the command's in `error.rs`, so this room imports nothing above it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadBackError {
    #[error("{0}")]
    Journal(#[from] ReadError),
    #[error("{0}")]
    Resume(#[from] ResumeError),
}

/// Reads the journal in `dir`, refusing a run that cannot be continued faithfully.
pub(crate) fn read_previous(dir: &Path) -> Result<Previous, ReadBackError> {
    let lines = journal::read_numbered(&dir.join(journal::FILE_NAME))?;
    let mut previous: Option<Previous> = None;
    let mut in_flight = InFlight::default();
    let mut unsettled = Unsettled::default();
    for (number, line) in lines {
        if let (Some((flow, step)), Some(p)) = (names(&line), previous.as_mut()) {
            p.named.push((number, flow.to_string(), step));
        }
        match (line, previous.as_mut()) {
            (Line::Run { run }, None) => {
                let run: RunInfo = serde_json::from_value(run).map_err(|error| {
                    ResumeError::RunLineUnreadable {
                        dir: dir.to_path_buf(),
                        error,
                    }
                })?;
                previous = Some(Previous {
                    run,
                    journaled: Journaled::default(),
                    named: Vec::new(),
                });
            }
            (Line::Exchange(exchange), Some(p)) => {
                in_flight.settle(&exchange);
                unsettled.exchange(&exchange.flow, p.journaled.exchanges.len());
                p.journaled.exchanges.push(*exchange)
            }
            (sent @ Line::Sending { .. }, Some(_)) => in_flight.0.push(sent),
            (Line::Step(step), Some(p)) => {
                // A skipped step sent nothing (an interrupted one is finished on resume): the
                // exchanges before it are still its flow's unfinished step's.
                if step.status != StepStatus::Skipped {
                    unsettled.step(&step.flow);
                }
                p.journaled.steps.push(step)
            }
            (Line::StepStarted { flow, step_index }, Some(p)) => {
                p.journaled.started.push((flow, step_index))
            }
            _ => {}
        }
    }
    let mut previous = previous.ok_or_else(|| ResumeError::NoRunLine {
        dir: dir.to_path_buf(),
    })?;
    previous.journaled.in_flight = in_flight.lost_quotes();
    previous.journaled.unsettled = unsettled.collect(&previous.journaled.exchanges);
    if ScenarioSource::parse(&previous.run.scenario_source) == ScenarioSource::Proxy {
        return Err(ResumeError::ProxySession {
            dir: dir.to_path_buf(),
        }
        .into());
    }
    if previous.run.target.embedded {
        return Err(ResumeError::EmbeddedSandbox.into());
    }
    Ok(previous)
}

/// The flow a journal line names, and its step index when it names one.
fn names(line: &Line) -> Option<(&str, Option<usize>)> {
    match line {
        Line::Exchange(exchange) => Some((&exchange.flow, None)),
        Line::Step(step) => Some((&step.flow, Some(step.step_index))),
        Line::StepStarted { flow, step_index } => Some((flow, Some(*step_index))),
        Line::Sending { flow, .. } => Some((flow, None)),
        _ => None,
    }
}

impl Previous {
    /// Refuses, naming the line, a journal line about a flow the run does not have or a step
    /// past its flow's last: not written by this run, and the resumed run would carry it into
    /// the evidence (a failed verdict from a step that never ran).
    /// `flows`: each flow instance's label and its number of steps.
    pub(crate) fn check_flows<'a>(
        &self,
        dir: &Path,
        flows: impl IntoIterator<Item = (&'a str, usize)>,
    ) -> Result<(), ResumeError> {
        let steps: HashMap<&str, usize> = flows.into_iter().collect();
        for (number, flow, step) in &self.named {
            let wrong = match (steps.get(flow.as_str()), step) {
                (None, _) => format!("flow `{flow}` is not one of this run's flows"),
                (Some(count), Some(step)) if step >= count => {
                    format!("step {step} of flow `{flow}`, which has {count} steps")
                }
                _ => continue,
            };
            return Err(ResumeError::ForeignLine {
                path: dir.join(journal::FILE_NAME),
                line: *number,
                wrong,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(flow: &str, seq: u64) -> Exchange {
        serde_json::from_value(serde_json::json!({
            "seq": seq, "flow": flow, "step": "claim", "operation": "claim",
            "booking_number": null, "attempt": 1, "method": "POST", "url": "u",
            "started_at": "2027-01-01T00:00:00Z", "duration_ms": 1, "request": {"headers": {}, "body": null},
            "response": null, "outcome": "passed", "checks": [], "error": null,
        }))
        .unwrap()
    }

    fn quote(attempt: u32, retried: bool) -> Exchange {
        let mut exchange = exchange("a#1", u64::from(attempt));
        exchange.step = "quote".into();
        exchange.operation = Operation::Quote;
        exchange.attempt = attempt;
        exchange.retried = retried;
        exchange
    }

    fn sending(attempt: &str) -> Line {
        let line = format!(
            r#"{{"type": "sending", "flow": "a#1", "step": "quote", "operation": "quote",
                "method": "POST", "url": "u", "at": "2027-01-01T00:00:00Z"{attempt}}}"#
        );
        journal::parse_line(&line).unwrap()
    }

    /// A quote answered 500 and retried, the retry never answered: the retry is in flight,
    /// whatever was recorded of the first attempt.
    #[test]
    fn each_attempt_of_a_write_is_settled_by_its_own_exchange_only() {
        let mut in_flight = InFlight(vec![sending(r#", "attempt": 1"#)]);
        in_flight.settle(&quote(1, true));
        in_flight.0.push(sending(r#", "attempt": 2"#));
        let lost: Vec<u32> = in_flight.lost_quotes().iter().map(|x| x.attempt).collect();
        assert_eq!(lost, [2]);
    }

    /// A journal written before attempts had lines of their own: its one line per call is
    /// settled by the call's final attempt, not by a retried one.
    #[test]
    fn an_older_journals_sending_line_stands_for_its_whole_call() {
        let mut in_flight = InFlight(vec![sending("")]);
        in_flight.settle(&quote(1, true));
        assert_eq!(
            in_flight.0.len(),
            1,
            "a retried attempt leaves the call in flight"
        );
        in_flight.settle(&quote(2, false));
        assert!(in_flight.0.is_empty());
    }

    /// Two steps of one name in a flow (a withdrawal claim, then a CFAR claim): the second,
    /// interrupted, must not take the first one's answer for its own.
    #[test]
    fn only_exchanges_after_the_flows_last_step_line_are_unsettled() {
        let exchanges = vec![exchange("a#1", 1), exchange("b#1", 2), exchange("a#1", 3)];
        let mut unsettled = Unsettled::default();
        unsettled.exchange("a#1", 0);
        unsettled.step("a#1");
        unsettled.exchange("b#1", 1);
        unsettled.exchange("a#1", 2);
        let seqs: Vec<u64> = unsettled
            .collect(&exchanges)
            .iter()
            .map(|x| x.seq)
            .collect();
        assert_eq!(seqs, vec![2, 3]);
    }
}

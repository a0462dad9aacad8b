//! Re-deriving a bundle's record from its journal: the ledger, the verdict, the flows, the
//! steps and the exchanges, computed again by the same code the run used ([`super::build`]),
//! and every place where `evidence.json` says otherwise.

use std::io::BufRead;

use super::differences::Differences;
use super::journal_steps::StepsDiff;
use super::tally::Tally;
use super::{Evidence, RunInfo};
use crate::journal::{self, FlowSummary, Line};
use crate::record::Exchange;
use crate::record::{FlowResult, FlowState};
use crate::scenario::Requirement;
use crate::timestamp::Timestamp;

/// The checks' warnings the computed record keeps (nothing reads them: the reports show the
/// record's own, which `verify` checks exchange by exchange).
const WARNINGS_KEPT: usize = 100;

/// The record computed again from the journal, and how `evidence.json` differs from it.
pub(crate) struct Rederived {
    /// Built by the run's own code from the journal's lines, its exchanges and steps counted
    /// (each exchange kept slim first, as a run keeps them) but not held: `exchanges` and
    /// `steps` are empty.
    pub evidence: Evidence,
    /// Each difference, named by its place in evidence.json; empty when the record agrees.
    pub differences: Vec<String>,
    /// How many exchanges the journal holds.
    pub exchanges: usize,
}

/// What the journal holds, read one line at a time: counted as the run counts it, never held
/// (its steps are compared with evidence.json's by [`StepsDiff`], from a reader of its own).
#[derive(Default)]
struct Read {
    run: Option<RunInfo>,
    /// The exchanges so far, counted (kept slim first, as the run's collector does).
    tally: Tally,
    /// How many exchanges the journal gave so far.
    exchanges: usize,
    end: Option<End>,
    sandbox_marked: bool,
    unrecognised: super::unrecognised::Unrecognised,
    /// `ppcert proxy --faults`: the faults graded again from the lines.
    faults: super::resilience::Grader,
}

/// The journal's end line: when and how the run ended, and what the verdict needs besides
/// the exchanges and steps.
struct End {
    at: Timestamp,
    complete: bool,
    requirements: Option<Vec<Requirement>>,
    flows: Option<Vec<FlowSummary>>,
}

/// Why a journal cannot be read as a finished run's.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeriveError {
    #[error("{}:{line}: {error}", journal::FILE_NAME)]
    Unreadable { line: usize, error: String },
    #[error("{}:{line}: not a journal line: {error}", journal::FILE_NAME)]
    NotAJournalLine {
        line: usize,
        error: serde_json::Error,
    },
    #[error("{}:{line}: the run line is unreadable: {error}", journal::FILE_NAME)]
    RunLine {
        line: usize,
        error: serde_json::Error,
    },
    #[error("{}:{line}: a second run line", journal::FILE_NAME)]
    SecondRun { line: usize },
    #[error("{}: no run line", journal::FILE_NAME)]
    NoRunLine,
    #[error(
        "{}: no end line saying what was required and how each flow ended: the run did not finish writing its bundle, or an older ppcert wrote it, and its verdict cannot be computed again",
        journal::FILE_NAME
    )]
    NoEndLine,
}

/// The journal, read a line at a time as far as its next exchange.
struct Journal<R> {
    lines: std::iter::Enumerate<crate::bounds::CappedLines<R>>,
    read: Read,
}

impl<R: BufRead> Journal<R> {
    fn new(journal: R) -> Self {
        let lines = crate::bounds::CappedLines::new(journal, crate::bounds::JOURNAL_LINE_BYTES);
        Journal {
            lines: lines.enumerate(),
            read: Read {
                tally: Tally::keeping(WARNINGS_KEPT),
                ..Read::default()
            },
        }
    }

    /// Reads the lines up to the next exchange (the run line, steps, faults, the end line:
    /// each taken in as it comes) and gives it; `None` at the journal's end.
    fn next_exchange(&mut self) -> Result<Option<Exchange>, DeriveError> {
        for (index, line) in &mut self.lines {
            let number = index + 1;
            let unreadable = |error: String| DeriveError::Unreadable {
                line: number,
                error,
            };
            let line = line.map_err(|e| unreadable(e.to_string()))?;
            let text = std::str::from_utf8(&line).map_err(|e| unreadable(e.to_string()))?;
            if text.trim().is_empty() {
                continue;
            }
            let parsed =
                journal::parse_line(text).map_err(|error| DeriveError::NotAJournalLine {
                    line: number,
                    error,
                })?;
            match parsed {
                Line::Exchange(exchange) => return Ok(Some(*exchange)),
                other => self.read.line(other, number)?,
            }
        }
        Ok(None)
    }
}

impl Read {
    /// A line other than an exchange.
    fn line(&mut self, line: Line, number: usize) -> Result<(), DeriveError> {
        match line {
            Line::Run { run } if self.run.is_none() => {
                let run = serde_json::from_value(run).map_err(|error| DeriveError::RunLine {
                    line: number,
                    error,
                })?;
                self.run = Some(run);
            }
            Line::Run { .. } => return Err(DeriveError::SecondRun { line: number }),
            Line::Step(step) => self.tally.step(&step),
            Line::Unrecognised {
                method,
                path,
                status,
                ..
            } => self.unrecognised.add(&method, &path, status),
            Line::FaultPlan { rules } => self.faults.plan(rules),
            Line::Fault(fault) => self.faults.fault(fault),
            Line::Webhook(relayed) => self.faults.webhook(&relayed),
            Line::End {
                at,
                complete,
                requirements,
                flows,
            } => {
                self.end = Some(End {
                    at,
                    complete,
                    requirements,
                    flows,
                })
            }
            _ => {}
        }
        Ok(())
    }

    /// Takes in one journaled exchange: graded, then kept slim and counted as the run's
    /// collector does.
    fn exchange(&mut self, exchange: Exchange) {
        if self.faults.active() {
            self.faults.exchange(&exchange);
        }
        let exchange = super::slim::slim_copy_marked_once(&exchange, &mut self.sandbox_marked);
        self.tally.exchange(&exchange);
        self.exchanges += 1;
    }
}

/// The record computed again from a journal while `evidence.json`'s steps and exchanges are
/// read one at a time ([`Derivation::recorded`]), each compared whole with the journal's next:
/// neither file is held.
pub(crate) struct Derivation<'a, R> {
    journal: Journal<R>,
    steps: StepsDiff<R>,
    /// The record as evidence.json holds it, its exchanges aside (read by the caller).
    recorded: &'a Evidence,
    diff: Differences,
    /// Exchanges evidence.json holds past the journal's last.
    extra: usize,
    /// Why the journal could not be read, once it could not.
    error: Option<DeriveError>,
}

impl<'a, R: BufRead> Derivation<'a, R> {
    /// `journal` and `steps` read the same journal: the steps are read from the second, as
    /// evidence.json (which holds them before the exchanges) gives its own.
    pub(crate) fn new(journal: R, steps: R, recorded: &'a Evidence) -> Self {
        Derivation {
            journal: Journal::new(journal),
            steps: StepsDiff::new(steps),
            recorded,
            diff: Differences::default(),
            extra: 0,
            error: None,
        }
    }

    /// evidence.json's next step or exchange, compared with the journal's next; false once
    /// the journal cannot be read ([`Derivation::finish`] says why).
    pub(crate) fn recorded(&mut self, item: super::read::Recorded) -> bool {
        let kept = match item {
            super::read::Recorded::Step(step) => {
                self.steps.recorded(step);
                return true;
            }
            super::read::Recorded::Exchange(kept) => *kept,
        };
        if self.error.is_some() {
            return false;
        }
        match self.journal.next_exchange() {
            Err(error) => {
                self.error = Some(error);
                false
            }
            Ok(None) => {
                self.extra += 1;
                true
            }
            Ok(Some(exchange)) => {
                if kept != exchange {
                    let index = self.journal.read.exchanges;
                    self.diff.compare_as_json(
                        &format!("exchanges[{index}] (seq {})", exchange.seq),
                        &kept,
                        &exchange,
                    );
                }
                self.journal.read.exchange(exchange);
                true
            }
        }
    }

    /// The rest of the journal read, the record computed and compared with evidence.json's.
    pub(crate) fn finish(mut self) -> Result<Rederived, DeriveError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        while let Some(exchange) = self.journal.next_exchange()? {
            self.diff.push(format!(
                "exchanges: the journal holds exchange {} that evidence.json leaves out",
                exchange.seq
            ));
            self.journal.read.exchange(exchange);
        }
        if self.extra > 0 {
            self.diff.push(format!(
                "exchanges: evidence.json holds {} exchanges the journal does not",
                self.extra
            ));
        }
        compute(self.journal.read, self.steps, self.recorded, self.diff)
    }
}

/// The record of what the journal gave, and where `recorded` differs from it.
fn compute<R: BufRead>(
    read: Read,
    steps: StepsDiff<R>,
    recorded: &Evidence,
    mut diff: Differences,
) -> Result<Rederived, DeriveError> {
    let mut run = read.run.ok_or(DeriveError::NoRunLine)?;
    let Some(End {
        at,
        complete,
        requirements: Some(requirements),
        flows: Some(flows),
    }) = read.end
    else {
        return Err(DeriveError::NoEndLine);
    };
    run.complete = complete;
    run.finished_at = Some(at);
    // A resumed run may carry a fresh token (same source) and other concurrency: the record
    // keeps the latest, the run line the first.
    run.token_fingerprint = recorded.run.token_fingerprint.clone();
    run.concurrency = recorded.run.concurrency;
    let results: Vec<FlowResult> = flows
        .into_iter()
        .map(|f| FlowResult {
            label: f.label,
            flow: f.flow,
            state: FlowState::default(),
            status: f.status,
            reason: f.reason,
        })
        .collect();
    let exchanges = read.exchanges;
    let mut evidence = super::model::assemble(run, &requirements, read.tally, &results, Vec::new());
    evidence.unrecognised = read.unrecognised.section();
    resilience(&mut evidence, read.faults, recorded, &mut diff);
    diff.compare_as_json("verdict", &recorded.verdict, &evidence.verdict);
    diff.compare_as_json(
        "requirements",
        &recorded.requirements,
        &evidence.requirements,
    );
    diff.compare_as_json("run", &recorded.run, &evidence.run);
    diff.compare_lists("flows", &recorded.flows, &evidence.flows);
    steps.finish(&mut diff);
    diff.compare_as_json(
        "unrecognised",
        &recorded.unrecognised,
        &evidence.unrecognised,
    );
    Ok(Rederived {
        evidence,
        differences: diff.finish(),
        exchanges,
    })
}

/// The faults graded again from the journal, the verdict with them, and where the record's
/// grading differs (an edited verdict).
fn resilience(
    evidence: &mut Evidence,
    faults: super::resilience::Grader,
    recorded: &Evidence,
    diff: &mut Differences,
) {
    super::graded::apply(evidence, faults.finish());
    diff.compare_as_json("resilience", &recorded.resilience, &evidence.resilience);
}

// Beside this file, for length; it names its imports (as resilience_tests.rs does).
#[cfg(test)]
#[path = "derive_tests.rs"]
mod tests;

//! What the evidence's headline needs of every exchange and step (the ledger, whether every
//! step passed, the sandbox's mark, the checks' warnings), counted one at a time: a record
//! read back from the journal (a proxy session's) is counted without being held.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::ledger::Ledger;
use crate::record::{Exchange, StepEvent, StepStatus};

/// The counts of a record so far.
#[derive(Default)]
pub(crate) struct Tally {
    pub ledger: Ledger,
    pub exchanges: usize,
    pub steps: usize,
    /// An answer named itself ppcert's sandbox.
    pub sandbox: bool,
    /// The labels of the flows the exchanges belong to.
    pub flows: BTreeSet<String>,
    /// The failed checks' warnings, the first [`Tally::keep`] of them.
    pub warnings: Vec<String>,
    /// Warnings past those kept, counted only.
    pub more_warnings: usize,
    /// The requests a proxy forwarded that no endpoint recognised (journal lines of their own).
    pub unrecognised: super::unrecognised::Unrecognised,
    /// How many warnings are kept; `None` keeps every one (a record held in memory anyway).
    keep: Option<usize>,
    unpassed: Unpassed,
    /// The first failed steps' reasons, for the hints of a record whose steps stay in the
    /// journal.
    pub failure_reasons: Vec<String>,
}

/// How many failed steps' reasons a tally keeps.
pub(crate) const REASONS_KEPT: usize = 100;

impl Tally {
    /// A tally keeping only the first `keep` warnings.
    pub(crate) fn keeping(keep: usize) -> Tally {
        Tally {
            keep: Some(keep),
            ..Tally::default()
        }
    }

    pub(crate) fn exchange(&mut self, exchange: &Exchange) {
        self.exchanges += 1;
        self.ledger.add(exchange);
        self.sandbox |= exchange.names_sandbox();
        if !self.flows.contains(&exchange.flow) {
            self.flows.insert(exchange.flow.clone());
        }
        for warning in check_warnings(exchange) {
            if self.keep.is_none_or(|keep| self.warnings.len() < keep) {
                self.warnings.push(warning);
            } else {
                self.more_warnings += 1;
            }
        }
    }

    pub(crate) fn step(&mut self, step: &StepEvent) {
        self.steps += 1;
        self.unpassed.add(step);
        if step.status == StepStatus::Failed && self.failure_reasons.len() < REASONS_KEPT {
            self.failure_reasons.extend(step.reason.clone());
        }
    }

    /// Every step's latest record passed.
    pub(crate) fn steps_passed(&self) -> bool {
        self.unpassed.keys.is_empty()
    }
}

/// The warnings of the checks an exchange failed that only warn, as the evidence lists them.
pub(crate) fn check_warnings(exchange: &Exchange) -> impl Iterator<Item = String> + '_ {
    exchange
        .checks
        .iter()
        .filter(|c| c.warning && !c.passed)
        .map(move |check| {
            format!(
                "{} {} (exchange {}): {}",
                exchange.flow, exchange.step, exchange.seq, check.detail
            )
        })
}

/// The steps whose latest record did not pass, by flow and step index: a resumed run records a
/// step again, and the interrupted record must not fail the verdict forever. Only steps that did
/// not pass are held (flow labels by number), so a large record of passes holds nothing.
#[derive(Default)]
struct Unpassed {
    flows: HashMap<String, u32>,
    keys: HashSet<(u32, usize)>,
}

impl Unpassed {
    fn add(&mut self, step: &StepEvent) {
        let passed = step.status == StepStatus::Passed;
        if passed && self.keys.is_empty() {
            return;
        }
        let next = self.flows.len() as u32;
        let flow = match self.flows.get(&step.flow) {
            Some(flow) => *flow,
            None if passed => return, // no step of this flow is held
            None => *self.flows.entry(step.flow.clone()).or_insert(next),
        };
        if passed {
            self.keys.remove(&(flow, step.step_index));
        } else {
            self.keys.insert((flow, step.step_index));
        }
    }
}

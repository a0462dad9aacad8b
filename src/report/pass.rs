//! What the HTML and Markdown reports read of every exchange, gathered in one pass over the
//! record ([`Evidence::for_each_exchange`]): the exchanges shown in full, the latency
//! percentiles, the first failures, the time span. Nothing else of an exchange is kept, so a
//! record of hundreds of thousands of exchanges read from the journal is never held.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;

use super::failures::{Failure, failure};
use crate::evidence::Evidence;
use crate::models::Operation;
use crate::record::{Exchange, Outcome};

/// Passed exchanges shown in full per operation; every exchange that did not pass is shown
/// (up to [`FAILED_SHOWN`]). With the caps on bookings and failures below, report.html stays
/// under about 10 MB at any scale; evidence.json and the journal keep everything.
pub const PASSED_SHOWN_PER_OPERATION: usize = 20;
pub const FAILED_SHOWN: usize = 1000;
/// Rows of a table (failures, warnings, bookings) the HTML report lists.
pub const ROWS_SHOWN: usize = 500;

/// Which exchanges report.html shows in full: every one that did not pass (up to
/// [`FAILED_SHOWN`]) and the first [`PASSED_SHOWN_PER_OPERATION`] passed per operation.
#[derive(Default)]
pub(super) struct Sampler {
    passed: BTreeMap<Operation, usize>,
    failed: usize,
}

impl Sampler {
    pub(super) fn keeps(&mut self, x: &Exchange) -> bool {
        if x.outcome == Outcome::Passed {
            let count = self.passed.entry(x.operation).or_default();
            *count += 1;
            *count <= PASSED_SHOWN_PER_OPERATION
        } else {
            self.failed += 1;
            self.failed <= FAILED_SHOWN
        }
    }
}

#[derive(Serialize)]
pub(crate) struct Latency {
    pub operation: String,
    pub count: usize,
    pub p50: u64,
    pub p95: u64,
    pub max: u64,
}

/// The record's exchanges as the reports read them.
#[derive(Default)]
pub(crate) struct Pass<'a> {
    pub count: usize,
    /// The exchanges shown in full, in the record's order (see [`Sampler`]): borrowed from a
    /// record in memory (copying a small run's every whole exchange was a tenth of its end),
    /// owned when read from the journal.
    pub sample: Vec<Cow<'a, Exchange>>,
    /// The first [`ROWS_SHOWN`] failures (no report lists more), and how many there are.
    pub failures: Vec<Failure>,
    pub failure_count: usize,
    /// The earliest start and the latest end of an exchange, in milliseconds.
    pub span: Option<(i64, i64)>,
    /// Answered attempts per operation by duration in milliseconds: the percentiles come out
    /// exact, in memory bounded by the distinct durations rather than the exchanges.
    durations: BTreeMap<&'static str, BTreeMap<u64, usize>>,
}

impl<'a> Pass<'a> {
    pub(crate) fn of(evidence: &'a Evidence) -> std::io::Result<Pass<'a>> {
        let mut pass = Pass::default();
        let mut sampler = Sampler::default();
        if let Some(exchanges) = evidence.exchanges_in_memory() {
            for x in exchanges {
                pass.add(x, &mut sampler, Cow::Borrowed);
            }
            return Ok(pass);
        }
        evidence.for_each_exchange(|x| {
            pass.add(x, &mut sampler, |x| Cow::Owned(x.clone()));
            Ok(())
        })?;
        Ok(pass)
    }

    fn add<'x>(
        &mut self,
        x: &'x Exchange,
        sampler: &mut Sampler,
        keep: impl FnOnce(&'x Exchange) -> Cow<'a, Exchange>,
    ) {
        self.count += 1;
        if sampler.keeps(x) {
            self.sample.push(keep(x));
        }
        if let Some(failure) = failure(x) {
            self.failure_count += 1;
            if self.failures.len() < ROWS_SHOWN {
                self.failures.push(failure);
            }
        }
        let start = x.started_at.millis();
        let end = start + x.duration_ms as i64;
        self.span = Some(match self.span {
            Some((origin, last)) => (origin.min(start), last.max(end)),
            None => (start, end),
        });
        if x.response.is_some() {
            let by_duration = self.durations.entry(x.operation.as_str()).or_default();
            *by_duration.entry(x.duration_ms).or_default() += 1;
        }
    }

    /// Nearest-rank percentiles of every answered attempt, per operation.
    pub(crate) fn latency(&self) -> Vec<Latency> {
        self.durations
            .iter()
            .map(|(operation, by_duration)| {
                let count: usize = by_duration.values().sum();
                // The duration of the `rank`th attempt (from 1) in order of duration.
                let at = |rank: usize| {
                    let mut seen = 0;
                    by_duration
                        .iter()
                        .find(|(_, n)| {
                            seen += **n;
                            seen >= rank
                        })
                        .map_or(0, |(ms, _)| *ms)
                };
                let rank = |p: f64| at(((p * count as f64).ceil() as usize).clamp(1, count));
                Latency {
                    operation: operation.to_string(),
                    count,
                    p50: rank(0.50),
                    p95: rank(0.95),
                    max: by_duration.keys().next_back().copied().unwrap_or(0),
                }
            })
            .collect()
    }
}

//! A bundle's behaviour in the terms `ppcert diff` compares, read from a verified bundle:
//! the verdict and ledger, and per operation the statuses, answer shapes, errors, the paths
//! values were read from and the latencies. Only sets and shapes are kept, never values.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

use super::shape::{self, Shape};
use crate::attest::bundle::Source;
use crate::evidence::baseline::BundleRef;
use crate::evidence::{Evidence, PARTNER_TRAFFIC, RequirementResult, Verdict};
use crate::journal;
use crate::models::Operation;
use crate::record::Exchange;

/// An operation as one step sends it, kept apart from the same operation sent elsewhere (a
/// quote for an update has other fields than a first quote) and from negative checks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct OpKey {
    pub operation: Operation,
    pub step: String,
    pub negative: bool,
}

impl OpKey {
    /// `update`, `quote in step update`, `claim (expected error)`.
    pub(crate) fn label(&self) -> String {
        let mut label = self.operation.as_str().to_string();
        if self.step != label {
            label.push_str(&format!(" in step {}", self.step));
        }
        if self.negative {
            label.push_str(" (expected error)");
        }
        label
    }
}

/// What one operation did in a bundle.
#[derive(Debug, Default)]
pub(crate) struct OpProfile {
    /// Statuses of the last attempt of each request (a retried 503 is the retry's business).
    pub statuses: BTreeSet<u16>,
    /// Requests whose last attempt got no answer.
    pub unanswered: usize,
    /// Last attempts the server accepted, and those it did not.
    pub succeeded: usize,
    pub failed: usize,
    /// The shape of the accepted answers.
    pub shape: Shape,
    /// Each refusal as `status: words`, words with anything holding a digit masked.
    pub errors: BTreeSet<String>,
    /// Per value read: the shape paths it was read from, and how often it was found or not.
    pub reads: BTreeMap<String, Read>,
    pub durations: Vec<u64>,
}

#[derive(Debug, Default)]
pub(crate) struct Read {
    pub paths: BTreeSet<String>,
    pub found: usize,
    pub missing: usize,
}

impl OpProfile {
    /// The latency at `percent` (nearest rank), in milliseconds.
    pub(crate) fn percentile(&self, percent: usize) -> u64 {
        let mut sorted = self.durations.clone();
        sorted.sort_unstable();
        match sorted.len() {
            0 => 0,
            n => sorted[((n * percent).div_ceil(100)).clamp(1, n) - 1],
        }
    }

    fn add(&mut self, exchange: &Exchange) {
        self.durations.push(exchange.duration_ms);
        for read in &exchange.reads {
            let entry = self.reads.entry(read.name.clone()).or_default();
            entry.paths.extend(shape::read_path(&read.from));
            match read.value {
                Some(_) => entry.found += 1,
                None => entry.missing += 1,
            }
        }
        let Some(response) = &exchange.response else {
            self.unanswered += 1;
            self.failed += 1;
            return;
        };
        self.statuses.insert(response.status);
        if response.accepted() {
            self.succeeded += 1;
            shape::add(&mut self.shape, &response.body.to_value());
        } else {
            self.failed += 1;
            let words = response.error_words().unwrap_or_default();
            self.errors
                .insert(format!("{}: {}", response.status, mask_digits(&words)));
        }
    }
}

/// Words with each word holding a digit (an id, a count, a date) replaced by `#`: what a
/// message says, whatever the data it names.
pub(crate) fn mask_digits(text: &str) -> String {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit()) {
                "#"
            } else {
                w
            }
        })
        .collect();
    words.join(" ")
}

/// A bundle's behaviour.
#[derive(Debug)]
pub(crate) struct Profile {
    pub bundle: BundleRef,
    /// The verdict the journal gives.
    pub verdict: Verdict,
    pub requirements: Vec<RequirementResult>,
    pub operations: BTreeMap<OpKey, OpProfile>,
    pub warnings: BTreeSet<String>,
    pub claim_statuses: BTreeSet<String>,
    /// Webhook deliveries as `event: verdict`, when the run received any.
    pub webhooks: Option<BTreeSet<String>>,
}

impl Profile {
    /// The profile of `source`, whose record `recorded` is, with the outcome the journal
    /// gives (`derived`). Exchanges are read from the journal one line at a time.
    pub(crate) fn read(
        source: &Source,
        name: String,
        recorded: &Evidence,
        derived: &Evidence,
    ) -> std::io::Result<Profile> {
        let mut operations: BTreeMap<OpKey, OpProfile> = BTreeMap::new();
        let mut claim_statuses = BTreeSet::new();
        each_exchange(source.reader(journal::FILE_NAME)?, |exchange| {
            if exchange.retried {
                return; // the attempt that followed tells how the request ended
            }
            for read in &exchange.reads {
                if let ("claim_status", Some(value)) = (read.name.as_str(), &read.value) {
                    claim_statuses.insert(value.clone());
                }
            }
            let key = OpKey {
                operation: exchange.operation,
                step: exchange.step.clone(),
                negative: !exchange.expectation.is_acceptance(),
            };
            operations.entry(key).or_default().add(&exchange);
        })?;
        let webhooks = recorded.webhooks.as_ref().map(|section| {
            (section.events.iter())
                .map(|e| {
                    let verdict = serde_json::to_value(e.verdict).unwrap_or_default();
                    let event = e.event.as_deref().unwrap_or("(no event)");
                    format!("{event}: {}", verdict.as_str().unwrap_or("?"))
                })
                .collect()
        });
        let run = &derived.run;
        let bundle = BundleRef {
            bundle: name,
            run_id: run.id.clone(),
            scenario: run.scenario.clone(),
            verdict: derived.verdict.word().to_lowercase(),
            source: if run.scenario_source == PARTNER_TRAFFIC {
                "proxy".into()
            } else {
                "run".into()
            },
        };
        Ok(Profile {
            bundle,
            verdict: derived.verdict,
            requirements: derived.requirements.clone(),
            operations,
            warnings: recorded.warnings.iter().map(|w| mask_digits(w)).collect(),
            claim_statuses,
            webhooks,
        })
    }
}

/// Calls `each` with every exchange line of a journal (ppcert writes the tag first).
fn each_exchange(journal: impl BufRead, mut each: impl FnMut(Exchange)) -> std::io::Result<()> {
    for line in journal.lines() {
        let line = line?;
        if !line.starts_with(r#"{"type":"exchange""#) {
            continue;
        }
        if let Ok(journal::Line::Exchange(exchange)) = journal::parse_line(&line) {
            each(*exchange);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_with_digits_are_masked() {
        assert_eq!(
            mask_digits("quote qt_13b8 expired at 2027-01-01 (code E42)"),
            "quote # expired at # (code #"
        );
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let profile = OpProfile {
            durations: (1..=20).rev().collect(),
            ..OpProfile::default()
        };
        assert_eq!(profile.percentile(50), 10);
        assert_eq!(profile.percentile(95), 19);
        assert_eq!(OpProfile::default().percentile(95), 0);
    }
}

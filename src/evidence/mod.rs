//! `evidence.json`: the canonical record of a run (schema version 1). Every report is rendered
//! from it alone; the requirement ledger counts exchanges as the provider's own ledger would.

pub(crate) mod baseline;
pub(crate) mod collect;
pub(crate) mod confirmed;
pub(crate) mod counted;
pub(crate) mod derive;
mod differences;
pub(crate) mod graded;
pub(crate) mod hints;
mod journal_steps;
mod ledger;
mod model;
mod pending;
pub(crate) mod read;
pub(crate) mod resilience;
pub(crate) mod resume;
pub(crate) mod resume_error;
mod slim;
pub(crate) mod stream;
pub(crate) mod suite;
mod tally;
pub(crate) mod unrecognised;
pub(crate) mod walk;
pub(crate) mod webhooks;

pub(crate) use crate::journal::FlowSummary;
/// The scenario source of a `ppcert proxy` session: the partner's own traffic, no scenario.
pub(crate) use crate::scenario::PARTNER_TRAFFIC;
pub(crate) use ledger::RequirementResult;
pub(crate) use model::{
    BookingRecord, Evidence, EvidenceError, FILE_NAME, Partner, RunInfo, SANDBOX_NOTICE,
    TargetInfo, Tool, Verdict, build,
};
pub(crate) use tally::check_warnings;

#[cfg(test)]
pub(crate) use model::test_run;

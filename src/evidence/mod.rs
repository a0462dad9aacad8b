//! `evidence.json`: the canonical record of a run (schema version 1). Every report is rendered
//! from it alone; the requirement ledger counts exchanges as the provider's own ledger would.

pub mod collect;
pub mod derive;
mod ledger;
mod model;
pub mod stream;
mod tally;
pub mod walk;
pub mod webhooks;

pub use crate::journal::FlowSummary;
/// The scenario source of a `ppcert proxy` session: the partner's own traffic, no scenario.
pub use crate::scenario::PARTNER_TRAFFIC;
pub use ledger::RequirementResult;
pub use model::{
    BookingRecord, Evidence, FILE_NAME, Partner, RunInfo, SANDBOX_NOTICE, TargetInfo, Tool,
    Verdict, build,
};
pub use tally::check_warnings;

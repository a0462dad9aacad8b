//! The evidence record and how it is built from a run's flows, steps and exchanges: the ledger, the verdict, the bookings.

use super::ledger::RequirementResult;
use super::tally::Tally;
use super::webhooks;
use crate::journal::FlowSummary;

use serde::{Deserialize, Serialize};

use crate::models::ProductType;
use crate::record::{Exchange, StepEvent};
use crate::record::{FlowResult, FlowStatus, QuoteRef};
use crate::scenario::Requirement;
use crate::timestamp::Timestamp;

pub(super) const SCHEMA_VERSION: u32 = 1;
pub(crate) const FILE_NAME: &str = "evidence.json";

/// Said in every report of a run against the embedded sandbox.
pub(crate) const SANDBOX_NOTICE: &str = "This run talked to ppcert's sandbox (its answers say so), not the provider's staging server: it is not certification evidence. Run against staging (--base-url) for evidence the provider accepts.";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Evidence {
    pub schema_version: u32,
    pub tool: Tool,
    pub run: RunInfo,
    pub verdict: Verdict,
    pub requirements: Vec<RequirementResult>,
    /// Left empty by [`super::read::head`] with [`super::read::Skip::Bulk`].
    #[serde(deserialize_with = "super::read::bookings")]
    pub bookings: Vec<BookingRecord>,
    pub flows: Vec<FlowSummary>,
    /// Left empty by [`super::read::head`] with [`super::read::Skip::Bulk`].
    #[serde(deserialize_with = "super::read::steps")]
    pub steps: Vec<StepEvent>,
    /// Left empty by [`super::read::head`], which reads the record without them.
    #[serde(deserialize_with = "super::read::exchanges")]
    pub exchanges: Vec<Exchange>,
    pub warnings: Vec<String>,
    /// Present when the run received webhooks (`--webhooks`, `--webhook-listen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<webhooks::WebhooksSection>,
    /// The token endpoint's (or command's) calls, when tokens came from one: when, what,
    /// how it went and the fingerprint of what it gave; never a body or a token.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_requests: Vec<crate::record::TokenRequest>,
    /// What changed since the bundle `--baseline` named (stored: the baseline is not part of
    /// this bundle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<super::baseline::Drift>,
    /// `proxy -- COMMAND`: the partner's suite and how it ended (stored: the journal records
    /// traffic, not the suite's process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<super::suite::SuiteCommand>,
    /// The requests a proxy session forwarded that no configured endpoint recognised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unrecognised: Option<super::unrecognised::Unrecognised>,
    /// `ppcert proxy --faults`: each fault injected and how the partner's client handled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resilience: Option<super::resilience::Resilience>,
    /// Where the whole exchanges are when `exchanges` holds them slim (a run's own record);
    /// `None` for evidence read back from a file, which holds them whole.
    #[serde(skip)]
    pub archive: Option<crate::journal::Archive>,
    /// Set when the exchanges and steps stayed in the journal (`archive`), too many to hold (a
    /// proxy session's): `exchanges` then holds only those the journal could not (whole),
    /// `steps` none; they are read from there one at a time (see [`super::walk`]).
    #[serde(skip)]
    pub in_journal: Option<InJournal>,
}

/// What a record left in its journal comes to.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct InJournal {
    pub exchanges: usize,
    pub steps: usize,
    /// The checks' warnings `warnings` holds (after the run's own), and how many more the
    /// exchanges in the journal give.
    pub warnings_kept: usize,
    pub more_warnings: usize,
    /// The reasons of the first failed steps (at most [`super::tally::REASONS_KEPT`]), for
    /// the hints of what to try next.
    pub failure_reasons: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Tool {
    pub name: String,
    pub version: String,
}

impl Default for Tool {
    fn default() -> Self {
        Tool {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunInfo {
    pub id: String,
    pub started_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    pub scenario: String,
    pub scenario_description: String,
    pub scenario_source: String,
    pub scenario_sha256: String,
    pub seed: u64,
    pub complete: bool,
    pub partner: Partner,
    pub target: TargetInfo,
    pub token_fingerprint: String,
    /// Where the tokens came from: a URL and client id, a command's name, a file; never a token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_source: Option<String>,
    pub concurrency: usize,
    pub scale: u32,
    /// Why these results are not certification evidence, when they are not.
    pub notice: Option<String>,
    /// The dialect the requests were spelled in (`spec`, `provider-docs`, or a file's name).
    #[serde(default = "default_dialect")]
    pub dialect: String,
}

/// Bundles written before dialects existed spoke the spec.
fn default_dialect() -> String {
    crate::dialect::DEFAULT.to_string()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Partner {
    pub name: String,
    pub flight_seller: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TargetInfo {
    pub base_url: String,
    pub environment: crate::environment::Environment,
    pub embedded: bool,
    /// An answer named itself ppcert's sandbox: whatever the URL, this was not staging.
    #[serde(default)]
    pub sandbox: bool,
}

impl TargetInfo {
    /// The embedded sandbox is known to be one before any answer says so.
    pub(crate) fn new(
        base_url: &str,
        environment: crate::environment::Environment,
        embedded: bool,
    ) -> TargetInfo {
        TargetInfo {
            base_url: base_url.to_string(),
            environment,
            embedded,
            sandbox: embedded,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Passed,
    Failed,
    Incomplete,
}

impl Verdict {
    /// The verdict as the console, the reports and the attestation's summary shout it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Verdict::Passed => "PASSED",
            Verdict::Failed => "FAILED",
            Verdict::Incomplete => "INCOMPLETE",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BookingRecord {
    pub booking_number: String,
    pub flow: String,
    pub quotes: Vec<QuoteRef>,
    pub contract_id: Option<String>,
    pub claim_status: Option<String>,
    pub price_delta: Option<f64>,
    /// The booking's currency, so amounts are shown in its minor units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
}

fn booking_record(flow: &FlowResult) -> Option<BookingRecord> {
    let state = &flow.state;
    let booking = state.booking.as_ref()?;
    if state.made_quotes.is_empty() {
        return None;
    }
    Some(BookingRecord {
        booking_number: booking.number.clone(),
        flow: flow.label.clone(),
        quotes: state.made_quotes.clone(),
        contract_id: state
            .contracts
            .get(&ProductType::Withdrawal)
            .or_else(|| state.contracts.values().next())
            .cloned(),
        claim_status: state.claim_status.as_ref().map(ToString::to_string),
        price_delta: state.price_delta,
        currency: Some(booking.currency.clone()),
    })
}

/// Assembles the record; `complete` is false for an interrupted run.
pub(crate) fn build(
    run: RunInfo,
    requirements: &[Requirement],
    exchanges: Vec<Exchange>,
    steps: Vec<StepEvent>,
    flows: &[FlowResult],
    warnings: Vec<String>,
) -> Evidence {
    let mut tally = Tally::default();
    exchanges
        .iter()
        .for_each(|exchange| tally.exchange(exchange));
    steps.iter().for_each(|step| tally.step(step));
    Evidence {
        exchanges,
        steps,
        ..assemble(run, requirements, tally, flows, warnings)
    }
}

/// The record of what `tally` counted, without its exchanges and steps: the caller puts them
/// in, or says where they are ([`InJournal`]).
pub(super) fn assemble(
    run: RunInfo,
    requirements: &[Requirement],
    tally: Tally,
    flows: &[FlowResult],
    warnings: Vec<String>,
) -> Evidence {
    let mut run = run;
    if tally.sandbox {
        run.target.sandbox = true;
        run.notice.get_or_insert_with(|| SANDBOX_NOTICE.to_string());
    }
    let steps_passed = tally.steps_passed();
    let ledger = tally
        .ledger
        .results(requirements, run.partner.flight_seller);
    let verdict = verdict(run.complete, &ledger, steps_passed, flows);
    let mut warnings = warnings;
    let unrecognised = tally.unrecognised.section();
    // Before the checks' warnings, which may be thousands: the console shows the first few.
    warnings.extend(unrecognised.as_ref().map(|u| u.describe()));
    warnings.extend(tally.warnings);
    Evidence {
        schema_version: SCHEMA_VERSION,
        tool: Tool::default(),
        run,
        verdict,
        requirements: ledger,
        bookings: flows.iter().filter_map(booking_record).collect(),
        flows: flows
            .iter()
            .map(|f| FlowSummary {
                label: f.label.clone(),
                flow: f.flow.clone(),
                status: f.status,
                reason: f.reason.clone(),
            })
            .collect(),
        steps: Vec::new(),
        exchanges: Vec::new(),
        token_requests: Vec::new(),
        warnings,
        webhooks: None,
        baseline: None,
        command: None,
        unrecognised,
        resilience: None,
        archive: None,
        in_journal: None,
    }
}

/// PASSED only for a complete run whose every requirement is met and every flow and step
/// passed (each step by its latest record, see [`Tally::steps_passed`]); INCOMPLETE whenever
/// the run did not end on its own.
fn verdict(
    complete: bool,
    ledger: &[RequirementResult],
    steps_passed: bool,
    flows: &[FlowResult],
) -> Verdict {
    let all_steps_passed = flows.iter().all(|f| f.status == FlowStatus::Completed) && steps_passed;
    if !complete {
        Verdict::Incomplete
    } else if ledger.iter().all(|r| r.met) && all_steps_passed {
        Verdict::Passed
    } else {
        Verdict::Failed
    }
}

/// Why an `evidence.json` could not be taken as a record.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EvidenceError {
    #[error("{name}: cannot read: {error}")]
    Unreadable { name: String, error: std::io::Error },
    #[error("{name}:{}: {error}", error.line())]
    NotARecord {
        name: String,
        error: serde_json::Error,
    },
    #[error("{name}: schema_version {found} is not supported (expected {SCHEMA_VERSION})")]
    Schema { name: String, found: u32 },
}

/// A run's description for tests that build evidence by hand.
#[cfg(test)]
pub(crate) fn test_run() -> RunInfo {
    serde_json::from_value(serde_json::json!({
        "id": "r", "started_at": "2026-01-01T00:00:00Z", "finished_at": null,
        "scenario": "s", "scenario_description": "", "scenario_source": "builtin:s",
        "scenario_sha256": "", "seed": 1, "complete": true,
        "partner": {"name": "p", "flight_seller": false},
        "target": {"base_url": "http://127.0.0.1", "environment": "staging", "embedded": false},
        "token_fingerprint": "", "concurrency": 1, "scale": 1, "notice": null
    }))
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::StepStatus;
    use crate::record::{FlowState, FlowStatus};

    #[test]
    fn the_verdict_passes_only_a_complete_run_with_everything_met_and_passed() {
        let requirement = |met| RequirementResult {
            operation: crate::models::Operation::Quote.into(),
            required: 1,
            succeeded: u32::from(met),
            failed: 0,
            unconfirmed: 0,
            met,
        };
        let step = |status| StepEvent {
            flow: "f#1".into(),
            step_index: 0,
            step: "quote".into(),
            status,
            reason: None,
            started_at: Timestamp::EPOCH,
            duration_ms: 0,
            state: None,
        };
        let flow = |status| FlowResult {
            label: "f#1".into(),
            flow: "f".into(),
            state: FlowState::default(),
            status,
            reason: None,
        };
        let met = [requirement(true)];
        let passed = [flow(FlowStatus::Completed)];
        let latest_passed = |steps: &[StepEvent]| {
            let mut tally = Tally::default();
            steps.iter().for_each(|s| tally.step(s));
            tally.steps_passed()
        };
        // Interrupted, then redone by a resumed run: the latest record of the step counts.
        let redone = latest_passed(&[step(StepStatus::Failed), step(StepStatus::Passed)]);
        assert!(redone);
        assert_eq!(verdict(true, &met, redone, &passed), Verdict::Passed);
        assert_eq!(verdict(false, &met, redone, &passed), Verdict::Incomplete);
        assert_eq!(
            verdict(true, &[requirement(false)], redone, &passed),
            Verdict::Failed
        );
        let undone = latest_passed(&[step(StepStatus::Passed), step(StepStatus::Failed)]);
        assert_eq!(verdict(true, &met, undone, &passed), Verdict::Failed);
        // A scenario without requirements (conformance) still fails on a failed flow.
        assert_eq!(
            verdict(true, &[], true, &[flow(FlowStatus::Failed)]),
            Verdict::Failed
        );
    }

    /// The run keeps finished flows settled (their trip dropped); the bookings the evidence
    /// lists must not lose anything by it.
    #[test]
    fn a_settled_flow_gives_the_same_booking_record() {
        let start = chrono::Utc::now();
        let booking = crate::datagen::Generator::new(7, "R", start, Default::default()).booking(3);
        let quote = |id: &str| crate::record::QuoteRef {
            id: id.into(),
            reference: format!("ref-{id}"),
            ..Default::default()
        };
        let result = FlowResult {
            label: "lifecycle#4".into(),
            flow: "lifecycle".into(),
            state: FlowState {
                booking: Some(booking),
                open_quotes: vec![quote("q3")],
                quotes: vec![quote("q2")],
                made_quotes: vec![quote("q1"), quote("q2"), quote("q3")],
                contracts: [(ProductType::Withdrawal, "ct1".to_string())].into(),
                claim_status: Some(crate::models::ClaimStatus::Refunded),
                price_delta: Some(-4.5),
                ..Default::default()
            },
            status: FlowStatus::Completed,
            reason: None,
        };
        let whole = serde_json::to_value(booking_record(&result)).unwrap();
        let settled = result.settled();
        assert!(settled.state.booking.as_ref().unwrap().plans.is_empty());
        assert_eq!(
            serde_json::to_value(booking_record(&settled)).unwrap(),
            whole
        );
        assert_eq!(whole["quotes"].as_array().unwrap().len(), 3);
    }
}

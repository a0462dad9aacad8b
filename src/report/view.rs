//! What the HTML and Markdown templates show, derived from the evidence alone (its exchanges
//! through one [`Pass`]): ledger, provenance, failures, latency percentiles, flows with their
//! exchanges, and a timeline.

use std::collections::BTreeMap;

use serde::Serialize;

pub(crate) use super::exchange_view::PRETTY_KEPT;
use super::exchange_view::{self, ExchangeView};
use super::failures::Failure;
use super::pass::{Latency, Pass, Sampler};
use super::prerender::Rendered;
use super::timeline::{self, Mark, Timeline};
use crate::evidence::Evidence;
use crate::record::FlowStatus;
use crate::record::{Exchange, Outcome};

/// The evidence's headline fields; exchanges reach the templates only through `flows`, so a
/// large run is not copied twice into the template engine.
#[derive(Serialize)]
pub(crate) struct Headline<'a> {
    pub schema_version: u32,
    pub tool: &'a crate::evidence::Tool,
    pub run: &'a crate::evidence::RunInfo,
    pub requirements: &'a [crate::evidence::RequirementResult],
    /// The first [`ROWS_SHOWN`]: the templates show no more, and a large run's every booking
    /// converted into template values would cost more than the rest of the report.
    pub bookings: &'a [crate::evidence::BookingRecord],
    pub booking_count: usize,
    /// The warnings in memory (a record left in the journal keeps the first ones) and how many
    /// there are.
    pub warnings: &'a [String],
    pub warning_count: usize,
    pub exchange_count: usize,
    pub flow_count: usize,
    pub webhooks: Option<&'a crate::evidence::webhooks::WebhooksSection>,
    /// What changed since `--baseline`'s bundle, when one was named.
    pub baseline: Option<&'a crate::evidence::baseline::Drift>,
    /// `proxy --faults`: each fault and how the client handled it.
    pub resilience: Option<&'a crate::evidence::resilience::Resilience>,
}

#[derive(Serialize)]
pub(crate) struct View<'a> {
    pub e: Headline<'a>,
    pub verdict: &'static str,
    pub banners: Vec<String>,
    pub duration: String,
    /// The first failures (see [`Pass::failures`]) and how many there are.
    pub failures: &'a [Failure],
    pub failure_count: usize,
    pub latency: Vec<Latency>,
    pub flows: Vec<FlowView<'a>>,
    pub timeline: Timeline,
    pub sample: Sample,
    /// A `ppcert proxy` session: no scenario, seed, concurrency, scale or bookings of ppcert's
    /// own, which the reports say instead of showing blanks and zeros.
    pub partner_traffic: bool,
    /// The command that would fix failures that look like a dialect mismatch.
    pub next_step: Option<String>,
}

pub use super::pass::{FAILED_SHOWN, PASSED_SHOWN_PER_OPERATION, ROWS_SHOWN};

/// The seqs of the exchanges report.html shows in full (see [`Sampler`]), of a record held in
/// memory: those are read whole from the journal before the reports are written.
pub(crate) fn shown(evidence: &Evidence) -> std::collections::HashSet<u64> {
    let mut sample = Sampler::default();
    evidence
        .exchanges
        .iter()
        .filter(|x| sample.keeps(x))
        .map(|x| x.seq)
        .collect()
}

/// What the HTML report left out, with counts, so it can say so.
#[derive(Serialize, Default)]
pub(crate) struct Sample {
    pub shown: usize,
    pub total: usize,
    pub passed_per_operation: usize,
    pub flows_not_listed: usize,
    pub rows_shown: usize,
}

#[derive(Serialize)]
pub(crate) struct FlowView<'a> {
    pub label: String,
    pub status: FlowStatus,
    pub reason: Option<String>,
    pub ok: bool,
    pub exchanges: Vec<ExchangeView<'a>>,
    /// The same exchanges as the timeline draws them.
    #[serde(skip)]
    pub(super) marks: Vec<Mark>,
}

/// Which exchanges a report lists: none (report.md), or those the [`Pass`] shows in full,
/// with the blocks a small run rendered while it went on.
#[derive(Clone, Copy)]
pub(crate) enum Exchanges<'a> {
    None,
    Shown(Option<&'a Rendered>),
}

fn duration(evidence: &Evidence) -> String {
    match evidence.run.finished_at {
        Some(end) => {
            let millis = end.millis() - evidence.run.started_at.millis();
            format!("{:.1} s", millis as f64 / 1000.0)
        }
        None => "unknown".into(),
    }
}

/// The flows listed, each with its sampled exchanges (when `exchanges`); how many exchanges
/// are shown; how many flows are left out.
fn flow_views<'a>(
    evidence: &'a Evidence,
    pass: &'a Pass<'a>,
    shown_how: Exchanges<'a>,
    kept: usize,
) -> (Vec<FlowView<'a>>, usize, usize) {
    let mut grouped: BTreeMap<&str, (Vec<ExchangeView>, Vec<Mark>)> = BTreeMap::new();
    let mut shown = 0;
    let mut budget = kept;
    let (exchanges, rendered) = match shown_how {
        Exchanges::None => (false, None),
        Exchanges::Shown(rendered) => (true, rendered),
    };
    for x in pass.sample.iter().filter(|_| exchanges) {
        shown += 1;
        let (views, marks) = grouped.entry(x.flow.as_str()).or_default();
        marks.push(mark(x));
        views.push(match rendered.and_then(|r| r.block(x.seq)) {
            Some(html) => ExchangeView::Rendered {
                seq: x.seq,
                outcome: x.outcome,
                html,
            },
            None => ExchangeView::Detail(Box::new(exchange_view::detail(x, &mut budget))),
        });
    }
    // A passing flow none of whose exchanges is shown adds nothing but length.
    let listed: Vec<&crate::evidence::FlowSummary> = evidence
        .flows
        .iter()
        .filter(|f| !exchanges || grouped.contains_key(f.label.as_str()) || f.reason.is_some())
        .collect();
    let flows_not_listed = evidence.flows.len() - listed.len();
    let flows = listed
        .into_iter()
        .map(|f| {
            let (exchanges, marks) = grouped.remove(f.label.as_str()).unwrap_or_default();
            FlowView {
                ok: f.status == FlowStatus::Completed,
                label: f.label.clone(),
                status: f.status,
                reason: f.reason.clone(),
                exchanges,
                marks,
            }
        })
        .collect();
    (flows, shown, flows_not_listed)
}

/// What the report says above everything: the sandbox notice, an interrupted run.
fn banners(evidence: &Evidence) -> Vec<String> {
    let mut banners = Vec::new();
    if let Some(notice) = &evidence.run.notice {
        banners.push(notice.clone());
    }
    banners.extend(evidence.command.as_ref().and_then(|c| c.banner()));
    if !evidence.run.complete && partner_traffic(evidence) {
        banners.push("This session was interrupted before the partner's command ended: the record is incomplete and the verdict cannot be PASSED. A proxy session cannot be resumed: run it again.".into());
    } else if !evidence.run.complete {
        banners.push("This run was interrupted: the record is incomplete and the verdict cannot be PASSED. Resume it with ppcert run --resume DIR.".into());
    }
    banners
}

/// A `ppcert proxy` session's record.
pub(super) fn partner_traffic(evidence: &Evidence) -> bool {
    evidence.run.scenario_source == crate::evidence::PARTNER_TRAFFIC
}

/// An exchange as the timeline marks it.
fn mark(x: &Exchange) -> Mark {
    let status = (x.response.as_ref()).map_or("—".into(), |r| r.status.to_string());
    Mark {
        started_at: x.started_at,
        duration_ms: x.duration_ms,
        passed: x.outcome == Outcome::Passed,
        title: format!(
            "#{} {} {} → {} ({} ms)",
            x.seq, x.step, x.method, status, x.duration_ms
        ),
    }
}

/// The view of `evidence` whose exchanges `pass` read. [`Exchanges::None`] leaves the flows'
/// exchanges and the timeline empty, for a summary that shows neither (report.md) and should
/// not pay for thousands of exchange views.
pub(crate) fn build<'a>(
    evidence: &'a Evidence,
    pass: &'a Pass<'a>,
    exchanges: Exchanges<'a>,
) -> View<'a> {
    build_keeping(evidence, pass, exchanges, PRETTY_KEPT)
}

/// [`build`], keeping at most `kept` bytes of pretty bodies.
pub(super) fn build_keeping<'a>(
    evidence: &'a Evidence,
    pass: &'a Pass<'a>,
    exchanges: Exchanges<'a>,
    kept: usize,
) -> View<'a> {
    let (mut flows, shown, flows_not_listed) = flow_views(evidence, pass, exchanges, kept);
    let verdict = evidence.verdict.word();
    let listed = flows.len();
    let marks = (flows.iter_mut()).map(|f| (f.label.clone(), std::mem::take(&mut f.marks)));
    let timeline = timeline::timeline(pass.span, listed, marks);
    View {
        e: Headline {
            schema_version: evidence.schema_version,
            tool: &evidence.tool,
            run: &evidence.run,
            requirements: &evidence.requirements,
            bookings: &evidence.bookings[..evidence.bookings.len().min(ROWS_SHOWN)],
            booking_count: evidence.bookings.len(),
            warnings: &evidence.warnings,
            warning_count: evidence.warning_count(),
            exchange_count: pass.count,
            flow_count: evidence.flows.len(),
            webhooks: evidence.webhooks.as_ref(),
            baseline: evidence.baseline.as_ref(),
            resilience: evidence.resilience.as_ref(),
        },
        verdict,
        banners: banners(evidence),
        duration: duration(evidence),
        failures: &pass.failures,
        failure_count: pass.failure_count,
        latency: pass.latency(),
        flows,
        timeline,
        sample: Sample {
            shown,
            total: pass.count,
            passed_per_operation: PASSED_SHOWN_PER_OPERATION,
            flows_not_listed,
            rows_shown: ROWS_SHOWN,
        },
        partner_traffic: partner_traffic(evidence),
        next_step: crate::evidence::hints::next_step(evidence),
    }
}

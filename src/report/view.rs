//! What the HTML and Markdown templates show, derived from the evidence alone (its exchanges
//! through one [`Pass`]): ledger, provenance, failures, latency percentiles, flows with their
//! exchanges, and a timeline.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::failures::Failure;
use super::pass::{Latency, Pass, Sampler};
use super::timeline::{self, Mark, Timeline};
use crate::evidence::Evidence;
use crate::record::FlowStatus;
use crate::record::{Body, Exchange, Outcome};
use crate::timestamp::Timestamp;

/// Bodies longer than this are cut in the HTML report (evidence.json keeps them).
pub(crate) const BODY_SHOWN: usize = 16 * 1024;

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
}

#[derive(Serialize)]
/// Bodies stay raw JSON here. Their pretty text, taken anyway to know what to show, is kept
/// beside while it fits [`PRETTY_KEPT`] in all (a small run's every body); past that the
/// template pretty-prints each body as it writes it (the `pretty_body` filter), so a large run
/// never holds every pretty body at once.
pub(crate) struct ExchangeView<'a> {
    pub seq: u64,
    pub step: String,
    pub operation: String,
    pub method: String,
    pub url: String,
    pub status: String,
    pub attempt: u32,
    pub started_at: Timestamp,
    pub duration_ms: u64,
    pub outcome: Outcome,
    pub request_headers: Vec<(String, String)>,
    pub request_body: Option<&'a str>,
    pub request_pretty: Option<String>,
    pub response_headers: Vec<(String, String)>,
    pub response_body: Option<&'a str>,
    pub response_pretty: Option<String>,
    pub notes: Vec<String>,
    pub checks: Vec<crate::record::Check>,
    pub error: Option<String>,
}

/// Pretty JSON (or text), cut at [`BODY_SHOWN`] with a note saying so.
pub(crate) fn pretty_body(body: &Body, truncated: bool) -> (Option<String>, Option<String>) {
    pretty_json(body.json(), truncated)
}

/// [`pretty_body`] from the body's JSON text; also the templates' `pretty_body` filter.
pub(crate) fn pretty_json(json: &str, truncated: bool) -> (Option<String>, Option<String>) {
    let text = match serde_json::from_str(json).unwrap_or(Value::Null) {
        Value::Null => return (None, None),
        Value::String(s) => s,
        other => serde_json::to_string_pretty(&other).unwrap_or_default(),
    };
    let mut note = truncated
        .then(|| "the server sent more than ppcert keeps; this is the start of it".to_string());
    if text.len() > BODY_SHOWN {
        note = Some(format!(
            "cut at {} KiB of {} KiB; evidence.json has all that was kept",
            BODY_SHOWN / 1024,
            text.len() / 1024
        ));
        let cut = text.floor_char_boundary(BODY_SHOWN);
        return (Some(format!("{}\n…", &text[..cut])), note);
    }
    (Some(text), note)
}

/// The pretty text the views of one report keep in all, beside the raw bodies: a default
/// batch's bodies are some 100 KiB. A report's every body was pretty-printed twice (once to
/// know whether and how it is shown, once to write it), a fifth of the HTML report's time.
pub(crate) const PRETTY_KEPT: usize = 1 << 20;

/// A body to show: its JSON text, its pretty text while `budget` has room for it, and the note
/// about its size.
struct Shown<'a> {
    json: Option<&'a str>,
    pretty: Option<String>,
    note: Option<String>,
}

fn shown_body<'a>(body: Option<&'a Body>, truncated: bool, budget: &mut usize) -> Shown<'a> {
    let Some(body) = body else {
        return Shown {
            json: None,
            pretty: None,
            note: None,
        };
    };
    let (text, note) = pretty_body(body, truncated);
    let text = text.filter(|t| !t.is_empty());
    let json = text.as_ref().map(|_| body.json());
    let pretty = text.filter(|t| match budget.checked_sub(t.len()) {
        Some(left) => {
            *budget = left;
            true
        }
        None => false,
    });
    Shown { json, pretty, note }
}

fn exchange_view<'a>(x: &'a Exchange, budget: &mut usize) -> ExchangeView<'a> {
    let mut notes = Vec::new();
    let request = shown_body(x.request.body.as_ref(), false, budget);
    notes.extend(request.note);
    let response = match &x.response {
        Some(r) => shown_body(Some(&r.body), r.body_truncated, budget),
        None => shown_body(None, false, budget),
    };
    notes.extend(response.note);
    if x.retried {
        notes.push("retried".into());
    }
    if x.delivery == crate::record::Delivery::Reconciled {
        notes.push("reconciled after a lost answer".into());
    }
    if let Some(layout) = &x.layout {
        notes.push(format!("layout: {layout}"));
    }
    ExchangeView {
        seq: x.seq,
        step: x.step.clone(),
        operation: x.operation.as_str().into(),
        method: x.method.clone(),
        url: x.url.clone(),
        status: x
            .response
            .as_ref()
            .map_or("—".into(), |r| r.status.to_string()),
        attempt: x.attempt,
        started_at: x.started_at,
        duration_ms: x.duration_ms,
        outcome: x.outcome,
        request_headers: x
            .request
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        request_body: request.json,
        request_pretty: request.pretty,
        response_headers: x
            .response
            .as_ref()
            .map(|r| {
                r.headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        response_body: response.json,
        response_pretty: response.pretty,
        notes,
        checks: x.checks.clone(),
        error: x.error.clone(),
    }
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
    pass: &'a Pass,
    exchanges: bool,
    kept: usize,
) -> (Vec<FlowView<'a>>, usize, usize) {
    let mut grouped: BTreeMap<&str, Vec<ExchangeView>> = BTreeMap::new();
    let mut shown = 0;
    let mut budget = kept;
    for x in pass.sample.iter().filter(|_| exchanges) {
        shown += 1;
        grouped
            .entry(x.flow.as_str())
            .or_default()
            .push(exchange_view(x, &mut budget));
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
        .map(|f| FlowView {
            ok: f.status == FlowStatus::Completed,
            label: f.label.clone(),
            status: f.status,
            reason: f.reason.clone(),
            exchanges: grouped.remove(f.label.as_str()).unwrap_or_default(),
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

/// A listed flow's label and its exchanges as the timeline marks them.
fn marks(flow: &FlowView<'_>) -> (String, Vec<Mark>) {
    let marks = flow
        .exchanges
        .iter()
        .map(|x| Mark {
            started_at: x.started_at,
            duration_ms: x.duration_ms,
            passed: x.outcome == Outcome::Passed,
            title: format!(
                "#{} {} {} → {} ({} ms)",
                x.seq, x.step, x.method, x.status, x.duration_ms
            ),
        })
        .collect();
    (flow.label.clone(), marks)
}

/// The view of `evidence` whose exchanges `pass` read. `exchanges: false` leaves the flows'
/// exchanges and the timeline empty, for a summary that shows neither (report.md) and should
/// not pay for thousands of exchange views.
pub(crate) fn build<'a>(evidence: &'a Evidence, pass: &'a Pass, exchanges: bool) -> View<'a> {
    build_keeping(evidence, pass, exchanges, PRETTY_KEPT)
}

/// [`build`], keeping at most `kept` bytes of pretty bodies.
pub(super) fn build_keeping<'a>(
    evidence: &'a Evidence,
    pass: &'a Pass,
    exchanges: bool,
    kept: usize,
) -> View<'a> {
    let (flows, shown, flows_not_listed) = flow_views(evidence, pass, exchanges, kept);
    let verdict = evidence.verdict.word();
    let timeline = timeline::timeline(pass.span, flows.len(), flows.iter().map(marks));
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

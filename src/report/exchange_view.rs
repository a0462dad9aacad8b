//! One exchange as report.html shows it: the fields its block's template
//! (`exchange.html.j2`) reads, or that block already rendered while the run went on.

use serde::Serialize;

use super::pretty::pretty_body;
use crate::record::{Body, Exchange, Outcome};
use crate::timestamp::Timestamp;

/// An exchange in the HTML report's list: its block rendered already (a small run's, see
/// [`super::prerender`]), or what the template renders it from. Either way the block is the
/// same text: it is one template, rendered from the same [`ExchangeDetail`].
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum ExchangeView<'a> {
    Rendered {
        seq: u64,
        outcome: Outcome,
        html: &'a str,
    },
    Detail(Box<ExchangeDetail<'a>>),
}

#[derive(Serialize)]
/// Bodies stay raw JSON here. Their pretty text, taken anyway to know what to show, is kept
/// beside while it fits [`PRETTY_KEPT`] in all (a small run's every body); past that the
/// template pretty-prints each body as it writes it (the `pretty_body` filter), so a large run
/// never holds every pretty body at once.
pub(crate) struct ExchangeDetail<'a> {
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

/// What the exchange template reads of `x`.
pub(super) fn detail<'a>(x: &'a Exchange, budget: &mut usize) -> ExchangeDetail<'a> {
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
    ExchangeDetail {
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

//! The report's timeline: each listed flow's exchanges as bars on one time axis, so stalls,
//! retries and concurrency show at a glance.

use serde::Serialize;

use super::view::{FlowView, parse};
use crate::evidence::Evidence;
use crate::record::Outcome;

/// Flows drawn in the timeline; a larger run says how many were left out.
const TIMELINE_ROWS: usize = 150;
const TIMELINE_WIDTH: f64 = 860.0;

#[derive(Serialize, Default)]
pub struct Timeline {
    pub width: f64,
    pub height: f64,
    pub span_ms: u64,
    pub rows: Vec<TimelineRow>,
    pub left_out: usize,
}

#[derive(Serialize)]
pub struct TimelineRow {
    pub label: String,
    pub y: f64,
    pub bars: Vec<Bar>,
}

#[derive(Serialize)]
pub struct Bar {
    pub x: f64,
    pub w: f64,
    pub class: &'static str,
    pub title: String,
}

pub(super) fn timeline(evidence: &Evidence, flows: &[FlowView<'_>]) -> Timeline {
    let starts: Vec<(i64, u64)> = evidence
        .exchanges
        .iter()
        .filter_map(|x| parse(&x.started_at).map(|t| (t.timestamp_millis(), x.duration_ms)))
        .collect();
    let Some(origin) = starts.iter().map(|(t, _)| *t).min() else {
        return Timeline::default();
    };
    let end = starts
        .iter()
        .map(|(t, d)| t + *d as i64)
        .max()
        .unwrap_or(origin);
    let span = (end - origin).max(1) as f64;
    let mut rows = Vec::new();
    for (i, flow) in flows.iter().take(TIMELINE_ROWS).enumerate() {
        let bars = flow
            .exchanges
            .iter()
            .filter_map(|x| {
                let start = parse(&x.started_at)?.timestamp_millis() - origin;
                Some(Bar {
                    x: (start as f64 / span * TIMELINE_WIDTH * 10.0).round() / 10.0,
                    w: ((x.duration_ms as f64 / span * TIMELINE_WIDTH).max(1.5) * 10.0).round()
                        / 10.0,
                    class: if x.outcome == Outcome::Passed {
                        "ok"
                    } else {
                        "bad"
                    },
                    title: format!(
                        "#{} {} {} → {} ({} ms)",
                        x.seq, x.step, x.method, x.status, x.duration_ms
                    ),
                })
            })
            .collect();
        rows.push(TimelineRow {
            label: flow.label.clone(),
            y: i as f64 * 16.0,
            bars,
        });
    }
    Timeline {
        width: TIMELINE_WIDTH,
        height: rows.len() as f64 * 16.0 + 4.0,
        span_ms: span as u64,
        rows,
        left_out: flows.len().saturating_sub(TIMELINE_ROWS),
    }
}

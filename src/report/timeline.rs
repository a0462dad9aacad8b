//! The report's timeline: each listed flow's exchanges as bars on one time axis, so stalls,
//! retries and concurrency show at a glance.

use serde::Serialize;

use crate::timestamp::Timestamp;

/// One exchange as the timeline draws it.
pub(super) struct Mark {
    pub started_at: Timestamp,
    pub duration_ms: u64,
    pub passed: bool,
    /// Shown on hover.
    pub title: String,
}

/// Flows drawn in the timeline; a larger run says how many were left out.
const TIMELINE_ROWS: usize = 150;
const TIMELINE_WIDTH: f64 = 860.0;

#[derive(Serialize, Default)]
pub(crate) struct Timeline {
    pub width: f64,
    pub height: f64,
    pub span_ms: u64,
    pub rows: Vec<TimelineRow>,
    pub left_out: usize,
}

#[derive(Serialize)]
pub(crate) struct TimelineRow {
    pub label: String,
    pub y: f64,
    pub bars: Vec<Bar>,
}

#[derive(Serialize)]
pub(crate) struct Bar {
    pub x: f64,
    pub w: f64,
    pub class: &'static str,
    pub title: String,
}

/// The timeline of the flows listed (`listed` of them, each a label and its marks, built only
/// for the rows drawn), on the time axis of every exchange of the run: `span`, from the
/// earliest start to the latest end in milliseconds.
pub(super) fn timeline(
    span: Option<(i64, i64)>,
    listed: usize,
    flows: impl Iterator<Item = (String, Vec<Mark>)>,
) -> Timeline {
    let Some((origin, end)) = span else {
        return Timeline::default();
    };
    let span = (end - origin).max(1) as f64;
    let mut rows = Vec::new();
    for (i, (label, marks)) in flows.take(TIMELINE_ROWS).enumerate() {
        let bars = marks
            .into_iter()
            .map(|mark| {
                let start = mark.started_at.millis() - origin;
                Bar {
                    x: (start as f64 / span * TIMELINE_WIDTH * 10.0).round() / 10.0,
                    w: ((mark.duration_ms as f64 / span * TIMELINE_WIDTH).max(1.5) * 10.0).round()
                        / 10.0,
                    class: if mark.passed { "ok" } else { "bad" },
                    title: mark.title,
                }
            })
            .collect();
        rows.push(TimelineRow {
            label,
            y: i as f64 * 16.0,
            bars,
        });
    }
    Timeline {
        width: TIMELINE_WIDTH,
        height: rows.len() as f64 * 16.0 + 4.0,
        span_ms: span as u64,
        rows,
        left_out: listed.saturating_sub(TIMELINE_ROWS),
    }
}

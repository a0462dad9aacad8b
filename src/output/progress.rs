//! The run's progress on stderr, as a subscriber of its events: one bar per requirement on a
//! terminal, a line per finished flow otherwise.

use std::collections::BTreeMap;
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::mode::{OutputMode, ProgressMode};
use crate::console::printable;
use crate::engine::{RunEvent, Subscriber};
use crate::models::Operation;
use crate::record::StepStatus;

/// Shows the run's progress: one bar per requirement, or a line per finished flow.
pub(crate) struct Progress {
    mode: OutputMode,
    bars: BTreeMap<Operation, ProgressBar>,
    /// Per operation: (failed, in flight).
    tallies: Mutex<BTreeMap<Operation, (u64, i64)>>,
    multi: Option<MultiProgress>,
    flows_done: Mutex<(usize, usize)>,
    /// The reasons said so far, each with the flow it was said for: a staging that is down
    /// fails every early flow for one reason, said once (at most [`REASONS_SAID`] kept).
    said: Mutex<std::collections::HashMap<String, String>>,
}

/// How many distinct reasons the lines remember.
const REASONS_SAID: usize = 1000;

impl Progress {
    /// `targets`: each required operation with how many successes the run plans.
    pub(crate) fn new(mode: OutputMode, targets: &[(Operation, u64)], flows: usize) -> Progress {
        Progress::drawn_on(mode, targets, flows, ProgressDrawTarget::stderr)
    }

    /// [`Progress::new`], the bars drawn on `target` (a terminal in memory, in the tests).
    fn drawn_on(
        mode: OutputMode,
        targets: &[(Operation, u64)],
        flows: usize,
        target: impl FnOnce() -> ProgressDrawTarget,
    ) -> Progress {
        let mut bars = BTreeMap::new();
        let multi = (mode.progress == ProgressMode::Bars)
            .then(|| MultiProgress::with_draw_target(target()));
        if let Some(multi) = &multi {
            let style = ProgressStyle::with_template("{prefix:>20} [{bar:30}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            for (operation, planned) in targets {
                let bar = multi.add(
                    ProgressBar::new(*planned)
                        .with_style(style.clone())
                        .with_prefix(operation.as_str()),
                );
                // Drawn from the start, not from the first success.
                bar.tick();
                bars.insert(*operation, bar);
            }
        }
        Progress {
            mode,
            bars,
            tallies: Mutex::new(BTreeMap::new()),
            multi,
            flows_done: Mutex::new((0, flows)),
            said: Mutex::new(std::collections::HashMap::new()),
        }
    }

    /// An exchange: the bar of its operation when the provider counts it, the failures and
    /// calls in flight beside it, and with `-v` its line (`POST https://… → 201 (84 ms)`).
    fn exchange(&self, exchange: &crate::record::Exchange) {
        let counted = exchange.counts_as_success();
        // A counted kind's final attempt that did not succeed (the ledger's `failed`).
        let failed =
            !counted && !exchange.retried && !exchange.poll && exchange.expectation.is_acceptance();
        let last_attempt = !exchange.retried;
        if counted && let Some(bar) = self.bars.get(&exchange.operation) {
            bar.inc(1);
        }
        self.tally(
            exchange.operation,
            u64::from(failed),
            -i64::from(last_attempt),
        );
        if !self.mode.verbose || self.mode.progress == ProgressMode::Quiet {
            return;
        }
        let answer = match (&exchange.response, &exchange.error) {
            (Some(response), _) => response.status.to_string(),
            (None, Some(error)) => format!("no answer: {}", printable(error)),
            (None, None) => "no answer".into(),
        };
        // Named by flow instance and step, so concurrent flows' lines can be told apart.
        let line = format!(
            "{} › {}: {} {} → {answer} ({} ms)",
            exchange.flow, exchange.step, exchange.method, exchange.url, exchange.duration_ms
        );
        self.say(&line);
    }
}

impl Subscriber for Progress {
    fn on(&self, event: &RunEvent) {
        match event {
            // A call is in flight from its first attempt to its last (`exchange`).
            RunEvent::Sending {
                operation,
                attempt: 1,
                ..
            } => self.tally(*operation, 0, 1),
            RunEvent::Sending { .. } => {}
            RunEvent::ExchangeFinished(exchange) => self.exchange(exchange),
            RunEvent::FlowFinished {
                label,
                status,
                steps,
                reason,
            } => {
                let (done, total) = {
                    let mut guard = self.flows_done.lock().unwrap_or_else(|e| e.into_inner());
                    guard.0 += 1;
                    *guard
                };
                if self.mode.progress == ProgressMode::Lines {
                    let word = match status {
                        StepStatus::Passed => "passed",
                        StepStatus::Failed => "FAILED",
                        StepStatus::Skipped => "stopped",
                    };
                    // A reason quotes the server's words: escaped, so a hostile staging
                    // cannot forge console lines or colours.
                    let why = reason
                        .as_deref()
                        .map(|r| self.reason_once(label, r))
                        .unwrap_or_default();
                    crate::console::tell!("[{done}/{total}] {label} {word} ({steps} steps){why}");
                }
            }
            RunEvent::StepStarted { .. } | RunEvent::StepFinished(_) => {}
        }
    }
}

impl Progress {
    /// `: REASON` the first time a reason is said, `: as FLOW above` after.
    fn reason_once(&self, label: &str, reason: &str) -> String {
        let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(first) = said.get(reason) {
            return format!(": as {first} above");
        }
        if said.len() < REASONS_SAID {
            said.insert(reason.to_string(), label.to_string());
        }
        format!(": {}", printable(reason))
    }

    /// Counts failures and calls in flight for `operation`, and shows them beside its bar.
    fn tally(&self, operation: Operation, failed: u64, in_flight: i64) {
        let Some(bar) = self.bars.get(&operation) else {
            return;
        };
        let mut tallies = self.tallies.lock().unwrap_or_else(|e| e.into_inner());
        let (failures, flying) = tallies.entry(operation).or_default();
        *failures += failed;
        *flying = (*flying + in_flight).max(0);
        let mut message = Vec::new();
        if *flying > 0 {
            message.push(format!("{flying} in flight"));
        }
        if *failures > 0 {
            message.push(format!("{failures} failed"));
        }
        bar.set_message(message.join(", "));
    }

    /// A line of the run's own (its header, Ctrl-C's notice) on stderr. Under the bars it must
    /// go through them: written beside them, it would be counted as one of their lines at the
    /// next redraw, which then erases it and leaves a stale first frame above the bars.
    pub(crate) fn say(&self, line: &str) {
        match &self.multi {
            Some(multi) => {
                let _ = multi.println(line);
            }
            None => crate::console::tell!("{line}"),
        }
    }

    /// Leaves each bar where the run left it: `finish()` would fill it to N/N whatever
    /// succeeded.
    pub(crate) fn finish(&self) {
        for bar in self.bars.values() {
            bar.abandon();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_said_once_then_named_by_its_first_flow() {
        let mode = OutputMode {
            progress: ProgressMode::Lines,
            color: false,
            verbose: false,
            json: false,
        };
        let progress = Progress::new(mode, &[], 3);
        let refused = "POST /quotes got no answer (connection failed)";
        assert_eq!(
            progress.reason_once("lifecycle#2", refused),
            format!(": {refused}")
        );
        assert_eq!(
            progress.reason_once("lifecycle#1", refused),
            ": as lifecycle#2 above"
        );
        assert_eq!(
            progress.reason_once("lifecycle#3", "HTTP 500"),
            ": HTTP 500"
        );
    }

    /// On a terminal: the run's header stays above the bars from the first frame to the last,
    /// and no frame is left behind (one line per bar, each once).
    #[test]
    fn the_header_stays_above_the_bars_and_no_stale_frame_is_left() {
        let term = indicatif::InMemoryTerm::new(24, 100);
        let mode = OutputMode {
            progress: ProgressMode::Bars,
            color: false,
            verbose: true,
            json: false,
        };
        let targets = [(Operation::Quote, 5), (Operation::Subscription, 5)];
        let drawn = term.clone();
        let progress = Progress::drawn_on(mode, &targets, 5, move || {
            ProgressDrawTarget::term_like(Box::new(drawn))
        });
        let header = "ppcert run R1: scenario certification against http://127.0.0.1:1 (5 flows, concurrency 4)";
        progress.say(header);
        progress.tally(Operation::Quote, 0, 1);
        progress.bars[&Operation::Quote].inc(2);
        progress.say("lifecycle#1 › quote: POST http://127.0.0.1:1/quotes → 201 (3 ms)");
        progress.tally(Operation::Quote, 1, -1);
        progress.finish();
        let screen = term.contents();
        let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.first(), Some(&header), "{screen}");
        assert!(lines[1].starts_with("lifecycle#1 › quote"), "{screen}");
        let bars = |name: &str| {
            lines
                .iter()
                .filter(|l| l.trim_start().starts_with(&format!("{name} [")))
                .count()
        };
        assert_eq!((bars("quote"), bars("subscription")), (1, 1), "{screen}");
        assert_eq!(lines.len(), 4, "{screen}");
        assert!(
            lines[2].contains("2/5") && lines[2].contains("1 failed"),
            "{screen}"
        );
    }
}

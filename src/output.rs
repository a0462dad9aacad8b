//! Terminal output, decided once per run: progress bars only on a terminal (never with `CI`
//! set, `--quiet` or `--no-progress`), plain lines otherwise; results on stdout, progress on
//! stderr; color only when asked or on a terminal without `NO_COLOR`.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::{ColorChoice, OutputArgs};
use crate::console::printable;
use crate::engine::{RunEvent, Subscriber};
use crate::evidence::{Evidence, Verdict};
use crate::models::Operation;
use crate::record::StepStatus;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressMode {
    Bars,
    Lines,
    Quiet,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct OutputMode {
    pub progress: ProgressMode,
    pub color: bool,
    pub verbose: bool,
    pub json: bool,
}

impl OutputMode {
    pub(crate) fn decide(args: &OutputArgs) -> OutputMode {
        let ci = crate::env::ci();
        let progress = if args.quiet {
            ProgressMode::Quiet
        } else if !args.no_progress && !ci && std::io::stderr().is_terminal() {
            ProgressMode::Bars
        } else {
            ProgressMode::Lines
        };
        let color = match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !crate::env::no_color() && std::io::stdout().is_terminal(),
        };
        OutputMode {
            progress,
            color: color && !args.json,
            verbose: args.verbose,
            json: args.json,
        }
    }

    fn paint(&self, text: &str, code: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// Shows the run's progress: one bar per requirement, or a line per finished flow.
pub(crate) struct Progress {
    mode: OutputMode,
    bars: BTreeMap<Operation, ProgressBar>,
    /// Per operation: (failed, in flight).
    tallies: Mutex<BTreeMap<Operation, (u64, i64)>>,
    multi: Option<MultiProgress>,
    flows_done: Mutex<(usize, usize)>,
}

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
            RunEvent::Sending { operation, .. } => self.tally(*operation, 0, 1),
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
                        .map(|r| format!(": {}", printable(r)))
                        .unwrap_or_default();
                    crate::console::tell!("[{done}/{total}] {label} {word} ({steps} steps){why}");
                }
            }
            RunEvent::StepStarted { .. } | RunEvent::StepFinished(_) => {}
        }
    }
}

impl Progress {
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

/// The summary on stdout: verdict, ledger, where the bundle is.
pub(crate) fn summary(mode: &OutputMode, evidence: &Evidence, bundle: &std::path::Path) -> String {
    let verdict = match evidence.verdict {
        Verdict::Passed => mode.paint("PASSED", "1;32"),
        Verdict::Failed => mode.paint("FAILED", "1;31"),
        Verdict::Incomplete => mode.paint("INCOMPLETE", "1;33"),
    };
    let mut out = format!(
        "ppcert {} — scenario {} — verdict {verdict}\n\n",
        evidence.run.id, evidence.run.scenario
    );
    out.push_str(&format!(
        "{:<22} {:>8} {:>9} {:>6} {:>11}  met\n",
        "operation", "required", "succeeded", "failed", "unconfirmed"
    ));
    for r in &evidence.requirements {
        let met = if r.met {
            mode.paint("yes", "32")
        } else {
            mode.paint("NO", "31")
        };
        out.push_str(&format!(
            "{:<22} {:>8} {:>9} {:>6} {:>11}  {met}\n",
            r.operation.as_str(),
            r.required,
            r.succeeded,
            r.failed,
            r.unconfirmed
        ));
    }
    let failed: Vec<_> = evidence
        .flows
        .iter()
        .filter(|f| f.reason.is_some())
        .collect();
    if !failed.is_empty() {
        out.push_str(&format!(
            "\n{} did not complete:\n",
            counted(failed.len(), "flow", "flows")
        ));
        let reasons = grouped(
            failed
                .iter()
                .map(|f| (f.label.as_str(), f.reason.as_deref().unwrap_or_default())),
        );
        for (labels, reason) in reasons.iter().take(SHOWN) {
            out.push_str(&format!("  {}: {}\n", labels, printable(reason)));
        }
        out.push_str(&left_out(reasons.len(), "reasons"));
    }
    for warning in evidence.warnings.iter().take(SHOWN) {
        let warning = printable(warning);
        out.push_str(&format!("{} {warning}\n", mode.paint("warning:", "33")));
    }
    out.push_str(&left_out(evidence.warning_count(), "warnings"));
    if let Some(notice) = &evidence.run.notice {
        out.push_str(&format!("\n{} {notice}\n", mode.paint("note:", "33")));
    }
    // Before the bundle's path: the one-line summary stays the last line, for scripts.
    if let Some(why) = why_not_passed(evidence) {
        out.push_str(&format!("\n{why}\n"));
    }
    if let Some(next) = crate::evidence::hints::next_step(evidence) {
        out.push_str(&format!("\n{} {next}\n", mode.paint("next:", "1")));
    }
    out.push_str(&format!("\nevidence bundle: {}\n", bundle.display()));
    out.push_str(&one_line(evidence));
    out
}

/// Why the verdict is not PASSED, in one line, so the table above is never left to contradict
/// it (every row "yes" and still FAILED).
pub(crate) fn why_not_passed(evidence: &Evidence) -> Option<String> {
    let short: Vec<String> = evidence
        .requirements
        .iter()
        .filter(|r| !r.met)
        .map(|r| format!("{} {}/{}", r.operation.as_str(), r.succeeded, r.required))
        .collect();
    let incomplete = evidence.flows.iter().filter(|f| f.reason.is_some()).count();
    match evidence.verdict {
        Verdict::Passed => None,
        Verdict::Incomplete => Some(
            "not passed: the run did not end on its own (interrupted), so it is incomplete".into(),
        ),
        Verdict::Failed if !short.is_empty() => Some(format!(
            "not passed: {} not met ({})",
            counted(short.len(), "requirement", "requirements"),
            short.join(", ")
        )),
        Verdict::Failed if incomplete > 0 => Some(format!(
            "not passed: every requirement is met, but {} did not complete",
            counted(incomplete, "flow", "flows")
        )),
        Verdict::Failed => Some(
            "not passed: every requirement is met, but a request broke a rule of the spec or a step failed (report.md lists the failures)".into(),
        ),
    }
}

/// How many items a list shows before it says how many it left out.
const SHOWN: usize = 10;

/// `1 flow`, `13 flows`.
pub(crate) fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Flows that failed for the same reason on one line (`lifecycle#1, lifecycle#2 and 2 more:
/// ...`), in the order the reasons first appear: a dead target is one line, not thirteen.
fn grouped<'a>(failed: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(String, &'a str)> {
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for (label, reason) in failed {
        match groups.iter_mut().find(|(_, r)| *r == reason) {
            Some((labels, _)) => labels.push(label),
            None => groups.push((vec![label], reason)),
        }
    }
    groups
        .into_iter()
        .map(|(labels, reason)| {
            let named = labels
                .iter()
                .take(3)
                .copied()
                .collect::<Vec<_>>()
                .join(", ");
            let more = labels.len().saturating_sub(3);
            let labels = if more > 0 {
                format!("{named} and {more} more")
            } else {
                named
            };
            (labels, reason)
        })
        .collect()
}

fn left_out(total: usize, what: &str) -> String {
    if total > SHOWN {
        format!(
            "  … and {} more {what} (all in report.html)\n",
            total - SHOWN
        )
    } else {
        String::new()
    }
}

/// Met required operations out of all required, counting each requirement up to its number.
fn required_met(evidence: &Evidence) -> (u32, u32) {
    evidence.requirements.iter().fold((0, 0), |(met, of), r| {
        (met + r.succeeded.min(r.required), of + r.required)
    })
}

fn seconds(evidence: &Evidence) -> f64 {
    match evidence.run.finished_at {
        Some(end) => (end.millis() - evidence.run.started_at.millis()).max(0) as f64 / 1000.0,
        None => 0.0,
    }
}

/// `49 exchanges, 28/28 required operations, verdict PASSED, 0.6 s`
pub(crate) fn one_line(evidence: &Evidence) -> String {
    let (met, of) = required_met(evidence);
    format!(
        "{} exchanges, {met}/{of} required operations, verdict {}, {:.1} s",
        evidence.exchange_count(),
        evidence.verdict.word(),
        seconds(evidence)
    )
}

/// `--json`: the summary as one JSON object, for scripts.
pub(crate) fn summary_json(evidence: &Evidence, bundle: &std::path::Path, exit_code: u8) -> String {
    let (met, of) = required_met(evidence);
    serde_json::json!({
        "run_id": evidence.run.id,
        "scenario": evidence.run.scenario,
        "verdict": evidence.verdict,
        "exit_code": exit_code,
        "exchanges": evidence.exchange_count(),
        "required_operations": {"met": met, "of": of},
        "requirements": evidence.requirements,
        "seconds": seconds(evidence),
        "sandbox": evidence.run.target.sandbox,
        "bundle": bundle.display().to_string(),
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn flows_failing_for_one_reason_share_a_line_in_first_seen_order() {
        let failed = [
            ("lifecycle#1", "no answer"),
            ("lifecycle#2", "HTTP 400"),
            ("lifecycle#3", "no answer"),
            ("lifecycle#4", "no answer"),
            ("lifecycle#5", "no answer"),
        ];
        let lines = grouped(failed.into_iter());
        assert_eq!(
            lines,
            vec![
                (
                    "lifecycle#1, lifecycle#3, lifecycle#4 and 1 more".to_string(),
                    "no answer"
                ),
                ("lifecycle#2".to_string(), "HTTP 400"),
            ]
        );
        assert_eq!(counted(1, "flow", "flows"), "1 flow");
        assert_eq!(counted(13, "flow", "flows"), "13 flows");
    }
}

//! The journal's subscriber to the run's event stream: each event becomes a line at once, so a
//! run that dies keeps everything recorded before it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use super::Journal;
use crate::engine::{RunEvent, Subscriber};
use crate::record::Exchange;

pub(crate) struct JournalWriter {
    inner: Mutex<Inner>,
    path: PathBuf,
}

struct Inner {
    journal: Journal,
    /// The first write that failed: the run goes on, and the evidence says so.
    error: Option<String>,
    /// Exchanges whose line could not be written, whole: the evidence takes them from here.
    unwritten: BTreeMap<u64, Exchange>,
}

/// What the journal could not hold.
pub(crate) struct Unwritten {
    pub error: Option<String>,
    pub exchanges: BTreeMap<u64, Exchange>,
}

impl JournalWriter {
    pub(crate) fn new(journal: Journal) -> JournalWriter {
        JournalWriter {
            path: journal.path().to_path_buf(),
            inner: Mutex::new(Inner {
                journal,
                error: None,
                unwritten: BTreeMap::new(),
            }),
        }
    }

    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The journal file's SHA-256, taken as its lines were written; `None` when it must be
    /// read back (a resumed run's, or one a write failed in).
    pub(crate) fn sha256_hex(&self) -> Option<String> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.journal.sha256_hex().filter(|_| inner.error.is_none())
    }

    /// Appends a line (a [`Line`](super::Line) or a [`LineRef`]); whether it reached the file.
    pub(crate) fn write<L: serde::Serialize>(&self, line: &L) -> bool {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        match inner.journal.append(line) {
            Ok(()) => true,
            Err(e) => {
                let error = format!("{}: {e}", self.path.display());
                inner.error.get_or_insert(error);
                false
            }
        }
    }

    pub(crate) fn take_unwritten(&self) -> Unwritten {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        Unwritten {
            error: inner.error.take(),
            exchanges: std::mem::take(&mut inner.unwritten),
        }
    }
}

/// The lines the engine's events become, written from the events as they are: the same JSON
/// as the [`Line`] of each kind, without copying an exchange (its bodies and headers) or a
/// step (its flow state) into a `Line` first.
#[derive(serde::Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum LineRef<'a> {
    Exchange(&'a Exchange),
    StepStarted {
        flow: &'a str,
        step_index: usize,
    },
    Step(&'a crate::record::StepEvent),
    Sending {
        flow: &'a str,
        step: &'a str,
        operation: crate::models::Operation,
        method: &'a str,
        url: &'a str,
        at: crate::timestamp::Timestamp,
        attempt: u32,
    },
}

impl Subscriber for JournalWriter {
    fn on(&self, event: &RunEvent) {
        match event {
            // A GET changes nothing: resume need not know one was in flight.
            RunEvent::Sending { method, .. } if method == "GET" => {}
            RunEvent::Sending {
                flow,
                step,
                operation,
                method,
                url,
                at,
                attempt,
            } => {
                self.write(&LineRef::Sending {
                    flow,
                    step,
                    operation: *operation,
                    method,
                    url,
                    at: *at,
                    attempt: *attempt,
                });
            }
            RunEvent::StepStarted { flow, step_index } => {
                self.write(&LineRef::StepStarted {
                    flow,
                    step_index: *step_index,
                });
            }
            RunEvent::ExchangeFinished(exchange) => {
                if !self.write(&LineRef::Exchange(exchange)) {
                    let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
                    inner
                        .unwritten
                        .insert(exchange.seq, Exchange::clone(exchange));
                }
            }
            RunEvent::StepFinished(step) => {
                self.write(&LineRef::Step(step));
            }
            RunEvent::FlowFinished { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RunEvent;
    use crate::evidence::collect::Recording;
    use crate::journal::Line;

    fn exchange() -> Box<Exchange> {
        serde_json::from_value(serde_json::json!({
            "seq": 0, "flow": "f#1", "step": "quote", "operation": "quote",
            "booking_number": null, "attempt": 1, "method": "POST", "url": "http://x/quotes",
            "started_at": "2027-01-01T00:00:00Z", "duration_ms": 3,
            "request": {"headers": {"content-type": "application/json"}, "body": {"data": 1}},
            "response": {"status": 201, "headers": {}, "body": {"data": {"id": "q1"}}},
            "outcome": "passed", "checks": [], "error": null,
        }))
        .unwrap()
    }

    fn recorded_through(journal: Journal) -> crate::evidence::collect::Recorded {
        let recording = Recording::new(journal, Vec::new(), Vec::new(), Vec::new());
        recording
            .events
            .emit(RunEvent::ExchangeFinished(exchange()));
        recording.take()
    }

    /// A small run keeps its exchanges whole until one does not fit the budget: that one and
    /// every later one are slim, and the run is no longer said to be all whole.
    #[test]
    fn a_recording_keeps_exchanges_whole_only_within_its_budget() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path(), false).unwrap();
        let recording = Recording::new(journal, Vec::new(), Vec::new(), Vec::new()).keeping_whole();
        let mut large = exchange();
        large.request.body = Some(crate::record::Body::from_value(
            &serde_json::json!({"data": "z".repeat(5 << 20)}),
        ));
        for x in [exchange(), large, exchange()] {
            recording.events.emit(RunEvent::ExchangeFinished(x));
        }
        assert!(!recording.all_kept_whole());
        let recorded = recording.take();
        let kept = &recorded.archive.unwrap().kept_whole;
        let whole: Vec<bool> = (recorded.exchanges.iter())
            .map(|x| kept.contains(&x.seq) && x.request.body.is_some())
            .collect();
        assert_eq!(whole, [true, false, false]);
    }

    #[test]
    fn a_journaled_exchange_is_kept_slim_and_read_back_whole_from_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let recorded = recorded_through(Journal::open(dir.path(), false).unwrap());
        assert_eq!(recorded.exchanges[0].seq, 1);
        assert!(
            recorded.exchanges[0].request.body.is_none(),
            "slim in memory"
        );
        assert!(recorded.journal_error.is_none());
        let archive = recorded.archive.unwrap();
        assert!(archive.kept_whole.is_empty());
        let mut whole = Vec::new();
        archive
            .exchanges(|x| {
                whole.push(x);
                Ok(true)
            })
            .unwrap();
        assert!(whole[0].request.body.is_some(), "whole in the journal");
    }

    /// The lines written from the events are those a [`Line`] of each kind writes, byte for
    /// byte: `--resume` and `verify` read them as `Line`s.
    #[test]
    fn the_lines_written_from_events_are_the_lines_of_each_kind() {
        let at = crate::timestamp::Timestamp::now();
        let exchange = exchange();
        let step: crate::record::StepEvent = serde_json::from_value(serde_json::json!({
            "flow": "f#1", "step_index": 2, "step": "quote", "status": "passed",
            "reason": null, "started_at": "2027-01-01T00:00:00Z", "duration_ms": 4,
            "state": {"captured": {}, "open_quotes": []},
        }))
        .unwrap();
        let op = crate::models::Operation::Quote;
        let pairs = [
            (
                serde_json::to_string(&LineRef::Exchange(&exchange)),
                serde_json::to_string(&Line::Exchange(exchange.clone())),
            ),
            (
                serde_json::to_string(&LineRef::Step(&step)),
                serde_json::to_string(&Line::Step(step.clone())),
            ),
            (
                serde_json::to_string(&LineRef::StepStarted {
                    flow: "f#1",
                    step_index: 3,
                }),
                serde_json::to_string(&Line::StepStarted {
                    flow: "f#1".into(),
                    step_index: 3,
                }),
            ),
            (
                serde_json::to_string(&LineRef::Sending {
                    flow: "f#1",
                    step: "quote",
                    operation: op,
                    method: "POST",
                    url: "http://x/quotes",
                    at,
                    attempt: 2,
                }),
                serde_json::to_string(&Line::Sending {
                    flow: "f#1".into(),
                    step: "quote".into(),
                    operation: op,
                    method: "POST".into(),
                    url: "http://x/quotes".into(),
                    at,
                    attempt: Some(2),
                }),
            ),
        ];
        for (borrowed, owned) in pairs {
            assert_eq!(borrowed.unwrap(), owned.unwrap());
        }
    }

    /// A full disk must not lose an exchange: memory keeps it whole and the evidence says why.
    #[test]
    fn an_exchange_the_journal_cannot_hold_stays_whole_in_memory() {
        let full = Journal {
            file: std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
            path: PathBuf::from("/dev/full"),
            written: None,
        };
        let recorded = recorded_through(full);
        assert!(recorded.exchanges[0].request.body.is_some());
        let error = recorded.journal_error.unwrap();
        assert!(error.starts_with("/dev/full: "), "{error}");
        assert!(recorded.archive.unwrap().kept_whole.contains(&1));
    }
}

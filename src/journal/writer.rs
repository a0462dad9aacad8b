//! The journal's subscriber to the run's event stream: each event becomes a line at once, so a
//! run that dies keeps everything recorded before it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use super::{Journal, Line};
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

    /// Appends a line; whether it reached the file.
    pub(crate) fn write(&self, line: &Line) -> bool {
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
                self.write(&Line::Sending {
                    flow: flow.clone(),
                    step: step.clone(),
                    operation: *operation,
                    method: method.clone(),
                    url: url.clone(),
                    at: *at,
                    attempt: Some(*attempt),
                });
            }
            RunEvent::StepStarted { flow, step_index } => {
                self.write(&Line::StepStarted {
                    flow: flow.clone(),
                    step_index: *step_index,
                });
            }
            RunEvent::ExchangeFinished(exchange) => {
                if !self.write(&Line::Exchange(exchange.clone())) {
                    let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
                    inner
                        .unwritten
                        .insert(exchange.seq, Exchange::clone(exchange));
                }
            }
            RunEvent::StepFinished(step) => {
                self.write(&Line::Step(step.clone()));
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

    /// A full disk must not lose an exchange: memory keeps it whole and the evidence says why.
    #[test]
    fn an_exchange_the_journal_cannot_hold_stays_whole_in_memory() {
        let full = Journal {
            file: std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
            path: PathBuf::from("/dev/full"),
        };
        let recorded = recorded_through(full);
        assert!(recorded.exchanges[0].request.body.is_some());
        let error = recorded.journal_error.unwrap();
        assert!(error.starts_with("/dev/full: "), "{error}");
        assert!(recorded.archive.unwrap().kept_whole.contains(&1));
    }
}

//! The run's recorder: numbers every exchange, appends it to the journal at once, keeps it in
//! memory for the evidence, and tells the progress display.

use std::sync::Mutex;

use crate::journal::{Archive, Journal, Line};
use crate::models::Operation;
use crate::record::{Exchange, StepEvent, StepStatus};

/// What the progress display hears about.
#[derive(Debug, Clone)]
pub enum Event {
    Exchange {
        operation: Operation,
        /// The provider counts it.
        counted: bool,
        /// A counted kind's final attempt that did not succeed (the ledger's `failed`).
        failed: bool,
        /// `POST https://… → 201 (84 ms)`, for `-v`.
        line: String,
        /// The call's last attempt (no retry follows): it is no longer in flight.
        last_attempt: bool,
    },
    /// A call of `operation` is about to be sent.
    Sending { operation: Operation },
    FlowDone {
        label: String,
        status: StepStatus,
        steps: usize,
        reason: Option<String>,
    },
}

type Observer = Box<dyn Fn(&Event) + Send + Sync>;

struct Inner {
    journal: Option<Journal>,
    /// Slim once journaled (see [`Exchange::slim`]); whole when their line could not be written.
    exchanges: Vec<Exchange>,
    steps: Vec<StepEvent>,
    next_seq: u64,
    journal_error: Option<String>,
    archive: Option<Archive>,
    /// An exchange kept in memory shows the sandbox's header (one suffices).
    sandbox_marked: bool,
}

pub struct Recorder {
    inner: Mutex<Inner>,
    observer: Observer,
}

/// Everything recorded, for the evidence.
pub struct Recorded {
    pub exchanges: Vec<Exchange>,
    pub steps: Vec<StepEvent>,
    pub journal_error: Option<String>,
    /// Where the whole exchanges are, when there is a journal.
    pub archive: Option<Archive>,
}

impl Recorder {
    /// `previous` holds what a resumed run already recorded; numbering continues after it.
    pub fn new(
        journal: Option<Journal>,
        previous: (Vec<Exchange>, Vec<StepEvent>),
        observer: Observer,
    ) -> Recorder {
        let next_seq = previous.0.iter().map(|e| e.seq).max().unwrap_or(0) + 1;
        let archive = journal.as_ref().map(|j| Archive {
            path: j.path().to_path_buf(),
            kept_whole: Default::default(),
        });
        let mut exchanges = previous.0;
        // A resumed run's earlier exchanges were read from this journal: it still has them.
        if archive.is_some() {
            exchanges.iter_mut().for_each(|x| x.slim(true));
        }
        Recorder {
            inner: Mutex::new(Inner {
                sandbox_marked: false,
                archive,
                journal,
                exchanges,
                steps: previous.1,
                next_seq,
                journal_error: None,
            }),
            observer,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the line reached the journal.
    fn write(inner: &mut Inner, line: &Line) -> bool {
        let Some(journal) = inner.journal.as_mut() else {
            return false;
        };
        match journal.append(line) {
            Ok(()) => true,
            Err(e) => {
                // The run goes on: what the journal lacks stays whole in memory and still
                // reaches evidence.json.
                inner
                    .journal_error
                    .get_or_insert_with(|| format!("{}: {e}", journal.path().display()));
                false
            }
        }
    }

    pub fn exchange(&self, mut exchange: Exchange) {
        let counted = exchange.counts_as_success();
        let answer = match (&exchange.response, &exchange.error) {
            (Some(response), _) => response.status.to_string(),
            (None, Some(error)) => format!("no answer: {error}"),
            (None, None) => "no answer".into(),
        };
        let event = Event::Exchange {
            operation: exchange.operation,
            counted,
            failed: !counted && !exchange.retried && !exchange.expected_error,
            last_attempt: !exchange.retried,
            line: format!(
                "{} {} → {answer} ({} ms)",
                exchange.method, exchange.url, exchange.duration_ms
            ),
        };
        {
            let mut inner = self.lock();
            exchange.seq = inner.next_seq;
            inner.next_seq += 1;
            if Self::write(&mut inner, &Line::Exchange(Box::new(exchange.clone()))) {
                let names_sandbox = exchange
                    .response
                    .as_ref()
                    .is_some_and(|r| r.headers.contains_key(crate::sandbox::SANDBOX_HEADER));
                exchange.slim(names_sandbox && !inner.sandbox_marked);
                inner.sandbox_marked |= names_sandbox;
            } else if let Some(archive) = inner.archive.as_mut() {
                archive.kept_whole.insert(exchange.seq);
            }
            inner.exchanges.push(exchange);
        }
        (self.observer)(&event);
    }

    /// The flow state travels to the journal only: resume reads it from there, and keeping a
    /// snapshot per step in memory would grow a large run by megabytes for nothing.
    pub fn step(&self, mut event: StepEvent) {
        let mut inner = self.lock();
        Self::write(&mut inner, &Line::Step(event.clone()));
        event.state = None;
        inner.steps.push(event);
    }

    pub fn line(&self, line: Line) {
        Self::write(&mut self.lock(), &line);
    }

    pub fn notify(&self, event: Event) {
        (self.observer)(&event);
    }

    pub fn take(&self) -> Recorded {
        let mut inner = self.lock();
        Recorded {
            exchanges: std::mem::take(&mut inner.exchanges),
            steps: std::mem::take(&mut inner.steps),
            journal_error: inner.journal_error.take(),
            archive: inner.archive.take(),
        }
    }
}

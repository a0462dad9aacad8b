//! The evidence's subscriber to the run's event stream: every exchange and step of the run,
//! each exchange kept slim once the journal has it (whole, in a small run), and the wiring of
//! a run's recording.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use super::model::{InJournal, assemble};
use super::tally::Tally;
use crate::engine::{EventStream, RunEvent, Subscriber};
use crate::journal::writer::JournalWriter;
use crate::journal::{Archive, Journal, Line};
use crate::record::{Exchange, StepEvent};

/// Everything recorded, for the evidence.
pub(crate) struct Recorded {
    /// Slim (see [`Exchange::slim`]) except those the journal could not hold and those a small
    /// run kept whole (both in the archive's `kept_whole`).
    pub exchanges: Vec<Exchange>,
    pub steps: Vec<StepEvent>,
    pub journal_error: Option<String>,
    /// Where the whole exchanges are.
    pub archive: Option<Archive>,
    /// Set when the exchanges and steps stayed in the journal (a spilling recording): what
    /// one pass over it counted. `exchanges` then holds only those the journal could not.
    tally: Option<Tally>,
}

/// What a small run keeps of its exchanges whole, at most: the default batch's 49 take about
/// 150 KiB, `--scale 10` about 1.5 MiB.
const WHOLE_KEPT: usize = 4 << 20;

/// An exchange whole, as the journal gives it back: without the whole answer a cut body was
/// read from (never written to the record).
fn as_journaled(exchange: &Exchange) -> Exchange {
    let mut whole = exchange.clone();
    if let Some(response) = &mut whole.response {
        response.full_json = None;
    }
    whole
}

/// About what an exchange holds in memory: its bodies, headers and URL, and a little for the
/// rest.
fn rough_size(x: &Exchange) -> usize {
    let headers = |h: &std::collections::BTreeMap<String, String>| -> usize {
        h.iter().map(|(k, v)| k.len() + v.len() + 48).sum()
    };
    let request =
        x.request.body.as_ref().map_or(0, |b| b.json().len()) + headers(&x.request.headers);
    let response = (x.response.as_ref()).map_or(0, |r| r.body.json().len() + headers(&r.headers));
    512 + x.url.len() + request + response
}

/// The checks' warnings a record left in the journal keeps in memory, for the reports (which
/// list 500); evidence.json lists them all, read from the journal again.
const WARNINGS_KEPT: usize = 1000;

impl Recorded {
    /// The evidence of everything recorded, saying so when the journal fell short.
    pub(crate) fn into_evidence(
        self,
        run: super::RunInfo,
        requirements: &[crate::scenario::Requirement],
        results: &[crate::record::FlowResult],
        mut warnings: Vec<String>,
    ) -> super::Evidence {
        if let Some(error) = self.journal_error {
            warnings.push(format!(
                "the journal could not be written completely ({error}); evidence.json holds everything"
            ));
        }
        let mut evidence = match self.tally {
            Some(tally) => {
                let counted = InJournal {
                    exchanges: tally.exchanges,
                    steps: tally.steps,
                    warnings_kept: tally.warnings.len(),
                    more_warnings: tally.more_warnings,
                    failure_reasons: tally.failure_reasons.clone(),
                };
                let mut evidence = assemble(run, requirements, tally, results, warnings);
                evidence.exchanges = self.exchanges;
                evidence.in_journal = Some(counted);
                evidence
            }
            None => super::build(
                run,
                requirements,
                self.exchanges,
                self.steps,
                results,
                warnings,
            ),
        };
        evidence.archive = self.archive;
        evidence
    }

    /// The labels of the flows the exchanges belong to.
    pub(crate) fn flow_labels(&self) -> BTreeSet<&str> {
        match &self.tally {
            Some(tally) => tally.flows.iter().map(String::as_str).collect(),
            None => self.exchanges.iter().map(|e| e.flow.as_str()).collect(),
        }
    }
}

#[derive(Default)]
struct Collected {
    exchanges: Vec<Exchange>,
    steps: Vec<StepEvent>,
    /// An exchange kept shows the sandbox's header (one suffices).
    sandbox_marked: bool,
    /// Keep nothing: `take` counts the record in the journal ([`super::walk`]), where it stays.
    spill: bool,
    /// Bytes of exchanges still to keep whole, not slim (see [`Recording::keeping_whole`]);
    /// once one does not fit, none is any more.
    whole_left: usize,
    /// Whether every exchange so far was kept whole (the budget never ran out).
    all_whole: bool,
    /// The exchanges kept whole within `whole_left`.
    whole_seqs: std::collections::HashSet<u64>,
}

impl Collected {
    /// Whether `exchange` is kept whole: while every one so far was and it fits what is left
    /// of the budget (counted off it).
    fn kept_whole(&mut self, exchange: &Exchange) -> bool {
        let left = (self.whole_left.checked_sub(rough_size(exchange))).filter(|_| self.all_whole);
        self.all_whole = left.is_some();
        if let Some(left) = left {
            self.whole_left = left;
            self.whole_seqs.insert(exchange.seq);
        }
        self.all_whole
    }
}

pub(crate) struct Collector(Mutex<Collected>);

impl Subscriber for Collector {
    fn on(&self, event: &RunEvent) {
        let mut collected = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if collected.spill {
            return;
        }
        match event {
            RunEvent::ExchangeFinished(exchange) => {
                let kept = if collected.kept_whole(exchange) {
                    as_journaled(exchange)
                } else {
                    super::slim::slim_copy_marked_once(exchange, &mut collected.sandbox_marked)
                };
                collected.exchanges.push(kept);
            }
            // The flow state travels to the journal only: resume reads it from there, and a
            // snapshot per step in memory would grow a large run by megabytes for nothing.
            RunEvent::StepFinished(step) => collected.steps.push(step.without_state()),
            _ => {}
        }
    }
}

/// A run's recording: the event stream the engine emits into, the journal and the collector
/// subscribed to it (with any other subscriber, such as the progress display).
pub(crate) struct Recording {
    pub events: Arc<EventStream>,
    journal: Arc<JournalWriter>,
    collector: Arc<Collector>,
}

impl Recording {
    /// `exchanges` and `steps` are what a resumed run already recorded (read from this
    /// journal, so kept slim); numbering continues after them.
    pub(crate) fn new(
        journal: Journal,
        exchanges: Vec<Exchange>,
        steps: Vec<StepEvent>,
        others: Vec<Arc<dyn Subscriber>>,
    ) -> Recording {
        // The journal's flow states stay there, as for the steps this session records.
        let steps = steps.iter().map(StepEvent::without_state).collect();
        let next_seq = exchanges.iter().map(|e| e.seq).max().unwrap_or(0) + 1;
        let exchanges = (exchanges.iter())
            .map(|x| super::slim::slim_copy(x, true))
            .collect();
        let journal = Arc::new(JournalWriter::new(journal));
        let collector = Arc::new(Collector(Mutex::new(Collected {
            exchanges,
            steps,
            sandbox_marked: false,
            spill: false,
            whole_left: 0,
            all_whole: false,
            whole_seqs: Default::default(),
        })));
        let mut subscribers: Vec<Arc<dyn Subscriber>> = vec![journal.clone(), collector.clone()];
        subscribers.extend(others);
        Recording {
            events: Arc::new(EventStream::new(next_seq, subscribers)),
            journal,
            collector,
        }
    }

    /// A recording that keeps nothing per exchange in memory: [`Recording::take`] counts the
    /// record in the journal and leaves it there, so a long session's memory stays flat, its
    /// end included.
    pub(crate) fn spilling(journal: Journal) -> Recording {
        let recording = Recording::new(journal, Vec::new(), Vec::new(), Vec::new());
        recording
            .collector
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spill = true;
        recording
    }

    /// A recording that keeps this session's exchanges whole in memory while they fit
    /// [`WHOLE_KEPT`], for a small run: its end writes evidence.json and the reports from
    /// memory, where a slim record reads the journal back twice (BENCHMARKS.md, issue 45).
    /// Past the budget (a scenario with large repeats, large answers) the rest are kept slim
    /// and read back as in any run. What it records is the same.
    pub(crate) fn keeping_whole(self) -> Recording {
        let mut collected = self.collector.0.lock().unwrap_or_else(|e| e.into_inner());
        collected.whole_left = WHOLE_KEPT;
        collected.all_whole = true;
        drop(collected);
        self
    }

    /// Whether every exchange so far was kept whole ([`Recording::keeping_whole`] and all
    /// within its budget): the run was as small as it meant to be.
    pub(crate) fn all_kept_whole(&self) -> bool {
        (self.collector.0.lock().unwrap_or_else(|e| e.into_inner())).all_whole
    }

    /// A line of the run itself (its end), outside the engine's events.
    pub(crate) fn write_line(&self, line: &Line) {
        self.journal.write(line);
    }

    /// The journal's SHA-256 as written (see [`JournalWriter::sha256_hex`]).
    pub(crate) fn journal_sha256(&self) -> Option<String> {
        self.journal.sha256_hex()
    }

    /// What was recorded; the exchanges the journal could not hold come back whole.
    pub(crate) fn take(&self) -> Recorded {
        let collected =
            std::mem::take(&mut *self.collector.0.lock().unwrap_or_else(|e| e.into_inner()));
        if collected.spill {
            return self.read_back();
        }
        let mut unwritten = self.journal.take_unwritten();
        let mut exchanges = collected.exchanges;
        let mut kept_whole = collected.whole_seqs;
        for exchange in &mut exchanges {
            if let Some(whole) = unwritten.exchanges.remove(&exchange.seq) {
                *exchange = whole;
                kept_whole.insert(exchange.seq);
            }
        }
        Recorded {
            exchanges,
            steps: collected.steps,
            journal_error: unwritten.error,
            archive: Some(Archive {
                path: self.journal.path().to_path_buf(),
                kept_whole,
            }),
            tally: None,
        }
    }

    /// What a spilling recording recorded: counted in one pass over its journal, the
    /// exchanges and steps left there (only those the journal could not hold come back).
    fn read_back(&self) -> Recorded {
        let unwritten = self.journal.take_unwritten();
        let kept_whole = unwritten.exchanges.keys().copied().collect();
        let path = self.journal.path().to_path_buf();
        let exchanges: Vec<Exchange> = unwritten.exchanges.into_values().collect();
        let (tally, error) = match super::walk::tally(&path, &exchanges, WARNINGS_KEPT) {
            Ok(tally) => (Some(tally), unwritten.error),
            Err(e) => (None, Some(format!("cannot read it back: {e}"))),
        };
        Recorded {
            exchanges,
            steps: Vec::new(),
            journal_error: error,
            archive: Some(Archive { path, kept_whole }),
            tally,
        }
    }
}

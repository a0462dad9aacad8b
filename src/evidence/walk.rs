//! A record's exchanges and steps one at a time, wherever they are: in memory, or left in the
//! journal ([`InJournal`], a proxy session's hundreds of thousands), so what reads a record
//! (evidence.json, the reports) never needs it whole.

use std::io;
use std::path::{Path, PathBuf};

use super::model::{Evidence, InJournal};
use super::tally::Tally;
use crate::journal::{EXCHANGE_TAG, Line, STEP_TAG, UNRECOGNISED_TAG, each_line};
use crate::record::{Exchange, StepEvent};

/// One exchange, one step or one request no endpoint recognised, in the order recorded.
pub(crate) enum Item<'a> {
    Exchange(&'a Exchange),
    Step(&'a StepEvent),
    /// A request a proxy forwarded unrecognised: its method, path and status.
    Unrecognised(&'a str, &'a str, Option<u16>),
}

/// Calls `each` with the exchanges (and the steps and the unrecognised requests, when
/// `steps`) of the journal at `path` in
/// the order written, the exchanges it could not hold (`unwritten`, whole, in seq order) put
/// back where their seq belongs. A line that does not parse is passed over: only a full disk
/// tears one, and what it held is then in `unwritten`.
pub(crate) fn walk(
    path: &Path,
    unwritten: &[Exchange],
    steps: bool,
    each: &mut dyn FnMut(Item<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let tags: &[&str] = if steps {
        &[EXCHANGE_TAG, STEP_TAG, UNRECOGNISED_TAG]
    } else {
        &[EXCHANGE_TAG]
    };
    let mut pending = unwritten.iter().peekable();
    each_line(path, tags, true, |line| {
        match line {
            Line::Exchange(exchange) => {
                while let Some(kept) = pending.next_if(|kept| kept.seq < exchange.seq) {
                    each(Item::Exchange(kept))?;
                }
                each(Item::Exchange(&exchange))?;
            }
            // A resumed run's flow state is the journal's alone, as the record holds it.
            Line::Step(step) => each(Item::Step(&step.without_state()))?,
            Line::Unrecognised {
                method,
                path,
                status,
                ..
            } => each(Item::Unrecognised(&method, &path, status))?,
            _ => {}
        }
        Ok(true)
    })?;
    pending.try_for_each(|kept| each(Item::Exchange(kept)))
}

/// Counts the journal at `path` (with the exchanges it could not hold) in one pass, keeping
/// the first `keep` warnings.
pub(crate) fn tally(path: &Path, unwritten: &[Exchange], keep: usize) -> io::Result<Tally> {
    let mut tally = Tally::keeping(keep);
    walk(path, unwritten, true, &mut |item| {
        match item {
            Item::Exchange(exchange) => tally.exchange(exchange),
            Item::Step(step) => tally.step(step),
            Item::Unrecognised(method, path, status) => {
                tally.unrecognised.add(method, path, status)
            }
        }
        Ok(())
    })?;
    Ok(tally)
}

impl Evidence {
    /// Where the exchanges and steps are when they stayed in the journal.
    fn journal(&self) -> Option<(&Path, &InJournal)> {
        let archive = self.archive.as_ref()?;
        Some((&archive.path, self.in_journal.as_ref()?))
    }

    pub(crate) fn exchange_count(&self) -> usize {
        match self.journal() {
            Some((_, counted)) => counted.exchanges,
            None => self.exchanges.len(),
        }
    }

    /// A record read back from a verified bundle to render its reports: its `exchanges`
    /// exchanges left in the journal at `path` and read from there one at a time, whole (a
    /// run's own reports show the same: it puts back whole those it shows). Its steps stay
    /// in memory as evidence.json holds them (the reports group them by flow), its warnings
    /// all in `warnings`; the journal holds the same steps, which `verify` compared.
    pub(crate) fn with_exchanges_in_journal(&mut self, path: PathBuf, exchanges: usize) {
        self.exchanges = Vec::new();
        self.archive = Some(crate::journal::Archive {
            path,
            kept_whole: Default::default(),
        });
        self.in_journal = Some(InJournal {
            exchanges,
            steps: self.steps.len(),
            warnings_kept: self.warnings.len(),
            more_warnings: 0,
            // The hints read the steps in memory.
            failure_reasons: Vec::new(),
        });
    }

    /// Every warning, those a record left in the journal did not keep counted in.
    pub(crate) fn warning_count(&self) -> usize {
        self.warnings.len() + self.in_journal.as_ref().map_or(0, |j| j.more_warnings)
    }

    /// The record's exchanges when memory holds every one (a run's own record, not left in the
    /// journal): [`Evidence::for_each_exchange`] walks exactly these.
    pub(crate) fn exchanges_in_memory(&self) -> Option<&[Exchange]> {
        self.journal().is_none().then_some(&self.exchanges[..])
    }

    /// Calls `each` with every exchange of the record in order: as memory holds them (slim, in
    /// a run's own record), or whole from the journal one at a time.
    pub(crate) fn for_each_exchange(
        &self,
        mut each: impl FnMut(&Exchange) -> io::Result<()>,
    ) -> io::Result<()> {
        let Some((path, _)) = self.journal() else {
            return self.exchanges.iter().try_for_each(each);
        };
        walk(path, &self.exchanges, false, &mut |item| match item {
            Item::Exchange(exchange) => each(exchange),
            Item::Step(_) | Item::Unrecognised(..) => Ok(()),
        })
    }

    /// Calls `each` with every step of the record in order, from memory or from the journal.
    pub(crate) fn for_each_step(
        &self,
        mut each: impl FnMut(&StepEvent) -> io::Result<()>,
    ) -> io::Result<()> {
        let Some((path, _)) = self.journal() else {
            return self.steps.iter().try_for_each(each);
        };
        each_line(path, &[STEP_TAG], true, |line| {
            if let Line::Step(step) = line {
                each(&step.without_state())?;
            }
            Ok(true)
        })
    }
}

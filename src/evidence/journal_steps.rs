//! The journal's steps, read from a reader of their own one at a time, and compared with
//! evidence.json's as that file gives them (before its exchanges, while the journal's are
//! read by the pass over every line): neither list is held.

use std::io::BufRead;

use super::differences::{Differences, ListDiff};
use crate::bounds::{CappedLines, JOURNAL_LINE_BYTES};
use crate::journal::{Line, STEP_TAG, kind_of, parse_line};
use crate::record::StepEvent;

/// The step lines of a journal, as the record keeps them (without the flow's state).
struct JournalSteps<R> {
    /// `None` once the lines ended or one could not be read: the pass over every line names
    /// what was wrong.
    lines: Option<CappedLines<R>>,
}

impl<R: BufRead> Iterator for JournalSteps<R> {
    type Item = StepEvent;

    fn next(&mut self) -> Option<StepEvent> {
        for line in self.lines.as_mut()? {
            let Ok(line) = line else { break };
            if kind_of(&line).as_deref() != Some(STEP_TAG) {
                continue;
            }
            let text = std::str::from_utf8(&line).ok();
            match text.map(parse_line) {
                Some(Ok(Line::Step(step))) => return Some(step.without_state()),
                _ => break,
            }
        }
        self.lines = None;
        None
    }
}

/// evidence.json's steps against the journal's, an item at a time.
pub(super) struct StepsDiff<R> {
    journal: JournalSteps<R>,
    diff: ListDiff,
}

impl<R: BufRead> StepsDiff<R> {
    pub(super) fn new(journal: R) -> Self {
        StepsDiff {
            journal: JournalSteps {
                lines: Some(CappedLines::new(journal, JOURNAL_LINE_BYTES)),
            },
            diff: ListDiff::new("steps"),
        }
    }

    /// evidence.json's next step.
    pub(super) fn recorded(&mut self, step: StepEvent) {
        match self.journal.next() {
            Some(derived) => self.diff.both(&step, &derived),
            None => self.diff.recorded_only(&step),
        }
    }

    /// evidence.json's steps all given: the journal's left over, and the differences.
    pub(super) fn finish(mut self, into: &mut Differences) {
        for derived in self.journal.by_ref() {
            self.diff.derived_only(&derived);
        }
        self.diff.finish(into);
    }
}

//! The order every journal ppcert writes keeps: one run line first, then exchanges numbered
//! upward in the order they were written. A line that breaks it, however well-formed, was not
//! written by ppcert (an edit, a copy, a line pasted twice): reading it back is refused, naming
//! the line, before a resumed run sends anything on the strength of it.

/// What the order depends on in a line.
pub(super) enum Seen {
    Run,
    Exchange { seq: u64, attempt: u32 },
    Other,
}

/// What the lines read so far allow next.
#[derive(Default)]
pub(super) struct Order {
    run_seen: bool,
    /// The seq of the last exchange line; the next one's must be greater. Not necessarily by
    /// one: an exchange whose line could not be written (a full disk) leaves a gap.
    last_seq: u64,
}

/// What is wrong with a line that breaks the order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OutOfOrder {
    #[error("a second run line (a journal holds one run)")]
    SecondRun,
    #[error("a line before the run line")]
    BeforeRun,
    #[error(
        "exchange {seq} after exchange {last} (exchanges are numbered upward in the order they were written)"
    )]
    NotUpward { seq: u64, last: u64 },
    #[error("exchange {seq} is attempt 0 (attempts count from 1)")]
    AttemptZero { seq: u64 },
}

impl Order {
    /// Takes the next line; `Err` says what is wrong with it.
    pub(super) fn next(&mut self, line: Seen) -> Result<(), OutOfOrder> {
        match line {
            Seen::Run if self.run_seen => return Err(OutOfOrder::SecondRun),
            Seen::Run => self.run_seen = true,
            _ if !self.run_seen => return Err(OutOfOrder::BeforeRun),
            Seen::Exchange { seq, attempt } => {
                if seq <= self.last_seq {
                    let last = self.last_seq;
                    return Err(OutOfOrder::NotUpward { seq, last });
                }
                if attempt == 0 {
                    return Err(OutOfOrder::AttemptZero { seq });
                }
                self.last_seq = seq;
            }
            Seen::Other => {}
        }
        Ok(())
    }
}

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

impl Order {
    /// Takes the next line; `Err` says what is wrong with it.
    pub(super) fn next(&mut self, line: Seen) -> Result<(), String> {
        match line {
            Seen::Run if self.run_seen => {
                return Err("a second run line (a journal holds one run)".into());
            }
            Seen::Run => self.run_seen = true,
            _ if !self.run_seen => return Err("a line before the run line".into()),
            Seen::Exchange { seq, attempt } => {
                if seq <= self.last_seq {
                    return Err(format!(
                        "exchange {seq} after exchange {} (exchanges are numbered upward in the order they were written)",
                        self.last_seq
                    ));
                }
                if attempt == 0 {
                    return Err(format!(
                        "exchange {seq} is attempt 0 (attempts count from 1)"
                    ));
                }
                self.last_seq = seq;
            }
            Seen::Other => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(seq: u64, attempt: u32) -> Seen {
        Seen::Exchange { seq, attempt }
    }

    /// The index of the first line refused.
    fn first_refused(lines: Vec<Seen>) -> Option<usize> {
        let mut order = Order::default();
        let mut refused = None;
        for (i, line) in lines.into_iter().enumerate() {
            if order.next(line).is_err() {
                refused = Some(i);
                break;
            }
        }
        refused
    }

    #[test]
    fn a_journal_as_ppcert_writes_it_is_in_order_gaps_included() {
        let lines = vec![Seen::Run, x(1, 1), Seen::Other, x(2, 2), x(4, 1)];
        assert_eq!(first_refused(lines), None);
    }

    #[test]
    fn a_repeated_or_backward_exchange_a_second_run_line_or_attempt_0_is_refused() {
        let cases = [
            vec![Seen::Run, x(1, 1), x(1, 1)],
            vec![Seen::Run, x(5, 1), x(0, 1)],
            vec![Seen::Run, x(1, 1), Seen::Run],
            vec![Seen::Run, x(1, 0)],
            vec![Seen::Other, Seen::Run],
        ];
        let refused: Vec<Option<usize>> = cases.into_iter().map(first_refused).collect();
        assert_eq!(refused, [Some(2), Some(2), Some(2), Some(1), Some(0)]);
    }
}

//! Reading a journal back: every line checked and numbered (what `--resume`, `verify` and
//! `report` trust), or the lines of some kinds streamed one at a time (the archive of a
//! run's whole exchanges).

use std::fs::File;
use std::path::{Path, PathBuf};

use super::lines::{EXCHANGE_TAG, Line, kind_of, parse_line};
use super::order::{Order, Seen};
use crate::bounds::JOURNAL_LINE_BYTES;
use crate::record::Exchange;

/// Where a run's whole exchanges are once memory keeps them slim: in the journal, except the
/// ones `kept_whole` (their line could not be written, or the run was small enough to keep
/// them, so memory holds them as they were).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Archive {
    pub path: PathBuf,
    pub kept_whole: std::collections::HashSet<u64>,
}

impl Archive {
    /// Calls `each` with every exchange of the journal, in the order written, one line in
    /// memory at a time; stops early when `each` returns false.
    pub(crate) fn exchanges(
        &self,
        mut each: impl FnMut(Exchange) -> std::io::Result<bool>,
    ) -> std::io::Result<()> {
        each_line(&self.path, &[EXCHANGE_TAG], false, |line| match line {
            Line::Exchange(exchange) => each(*exchange),
            _ => Ok(true),
        })
    }
}

/// Calls `each` with every line of the journal at `path` whose `type` is one of `tags`,
/// parsed, in the order written, one line in memory at a time; stops early when `each` returns
/// false. A line that does not parse is an error, or passed over when `lenient` (a line a full
/// disk tore: what it held is among the exchanges the journal could not hold).
pub(crate) fn each_line(
    path: &Path,
    tags: &[&str],
    lenient: bool,
    mut each: impl FnMut(Line) -> std::io::Result<bool>,
) -> std::io::Result<()> {
    let file = File::open(path)?;
    let lines = crate::bounds::CappedLines::new(std::io::BufReader::new(file), JOURNAL_LINE_BYTES);
    for (number, line) in lines.enumerate() {
        let line = line?;
        if !kind_of(&line).is_some_and(|kind| tags.contains(&kind.as_ref())) {
            continue;
        }
        let parsed = match parse_line(&String::from_utf8_lossy(&line)) {
            Ok(parsed) => parsed,
            Err(_) if lenient => continue,
            Err(e) => {
                let at = format!("{}:{}: {e}", path.display(), number + 1);
                return Err(std::io::Error::other(at));
            }
        };
        if !each(parsed)? {
            break;
        }
    }
    Ok(())
}

/// Why a journal could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error("{}: cannot read: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A finished line (not the torn tail of a killed run) that is not a journal line.
    #[error("{}:{line}: not a journal line: {error}", path.display())]
    NotAJournalLine {
        path: PathBuf,
        line: usize,
        error: String,
    },
    /// A well-formed line out of the order ppcert writes: an edit, a copy, a pasted line.
    #[error("{}:{line}: not a line ppcert wrote: {why}", path.display())]
    NotWrittenByPpcert {
        path: PathBuf,
        line: usize,
        why: super::order::OutOfOrder,
    },
}

/// Reads a journal, each line with its number in the file (from 1) for errors that name it.
/// A torn last line (the run was killed mid-write, even inside a UTF-8 character: it has no
/// newline after it) is ignored, any other bad line is an error naming its number. A finished
/// last line that is not a journal line is such an error too: it was not torn by a crash, and
/// appending after it would leave it in the middle of the record. So is a well-formed line out
/// of the order ppcert writes (see [`Order`]).
pub(crate) fn read_numbered(path: &Path) -> Result<Vec<(usize, Line)>, ReadError> {
    let bytes = std::fs::read(path).map_err(|source| ReadError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let mut parsed = Vec::new();
    let mut order = Order::default();
    for (i, raw) in lines.iter().enumerate() {
        let torn = i + 1 == lines.len();
        if raw.len() > JOURNAL_LINE_BYTES {
            return Err(ReadError::NotAJournalLine {
                path: path.to_path_buf(),
                line: i + 1,
                error: format!(
                    "longer than {} MiB, ppcert's bound for a journal line",
                    JOURNAL_LINE_BYTES >> 20
                ),
            });
        }
        let parsed_line = std::str::from_utf8(raw)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                if text.trim().is_empty() {
                    Ok(None)
                } else {
                    parse_line(text).map(Some).map_err(|e| e.to_string())
                }
            });
        match parsed_line {
            Ok(Some(line)) => {
                order
                    .next(seen(&line))
                    .map_err(|why| ReadError::NotWrittenByPpcert {
                        path: path.to_path_buf(),
                        line: i + 1,
                        why,
                    })?;
                parsed.push((i + 1, line));
            }
            Ok(None) => {}
            Err(_) if torn => break,
            Err(error) => {
                return Err(ReadError::NotAJournalLine {
                    path: path.to_path_buf(),
                    line: i + 1,
                    error,
                });
            }
        }
    }
    Ok(parsed)
}

/// [`read_numbered`] without the numbers.
#[cfg(test)]
pub(crate) fn read(path: &Path) -> Result<Vec<Line>, ReadError> {
    Ok(read_numbered(path)?
        .into_iter()
        .map(|(_, line)| line)
        .collect())
}

/// What [`Order`] checks of a line.
fn seen(line: &Line) -> Seen {
    match line {
        Line::Run { .. } => Seen::Run,
        Line::Exchange(exchange) => Seen::Exchange {
            seq: exchange.seq,
            attempt: exchange.attempt,
        },
        _ => Seen::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::lines::tests::{exchange, sending};
    use crate::journal::{FILE_NAME, Journal};

    /// `read` takes any line tagged `exchange` for one; the bundle is written from the
    /// archive, which must find the same exchanges or fail after the run has sent everything.
    #[test]
    fn an_exchange_line_written_with_its_keys_in_another_order_is_read_by_the_archive_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let run = serde_json::to_string(&Line::Run {
            run: serde_json::json!({"id": "r"}),
        })
        .unwrap();
        let line = serde_json::to_value(Line::Exchange(Box::new(exchange()))).unwrap();
        let reordered = serde_json::to_string_pretty(&line)
            .unwrap()
            .replace('\n', "");
        assert!(
            !reordered.starts_with(r#"{"type":"exchange""#),
            "{reordered}"
        );
        std::fs::write(&path, format!("{run}\n{reordered}\n")).unwrap();
        assert_eq!(read(&path).unwrap().len(), 2);
        let archive = Archive {
            path,
            kept_whole: Default::default(),
        };
        let mut seqs = Vec::new();
        archive
            .exchanges(|x| {
                seqs.push(x.seq);
                Ok(true)
            })
            .unwrap();
        assert_eq!(seqs, [3]);
    }

    #[test]
    fn a_torn_tail_even_inside_a_utf8_character_is_read_past_and_cut_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = Journal::open(dir.path(), false).unwrap();
        let run = Line::Run {
            run: serde_json::json!({"id": "r"}),
        };
        journal.append(&run).unwrap();
        journal.append(&sending("é")).unwrap();
        drop(journal);
        let path = dir.path().join(FILE_NAME);
        let mut bytes = std::fs::read(&path).unwrap();
        let torn = serde_json::to_string(&sending("é")).unwrap();
        let cut = torn.find('é').unwrap() + 1; // inside the two bytes of é
        bytes.extend_from_slice(&torn.as_bytes()[..cut]);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read(&path).unwrap().len(), 2);
        let mut journal = Journal::open(dir.path(), true).unwrap();
        journal.append(&sending("b")).unwrap();
        let lines = read(&path).unwrap();
        assert_eq!(
            lines.len(),
            3,
            "the torn tail is gone, the new line is whole"
        );
        assert_eq!(lines[2], sending("b"));
    }

    #[test]
    fn a_finished_line_that_is_not_a_journal_line_is_named_by_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let run = serde_json::to_string(&Line::Run {
            run: serde_json::json!({"id": "r"}),
        })
        .unwrap();
        let good = serde_json::to_string(&sending("a")).unwrap();
        let text = format!("{run}\n{good}\n{{\"type\":\"nonsense\"}}\n{good}\n");
        std::fs::write(&path, text).unwrap();
        let error = read(&path).unwrap_err();
        assert!(
            matches!(error, ReadError::NotAJournalLine { line: 3, .. }),
            "{error}"
        );
        assert!(
            error.to_string().contains(":3: not a journal line"),
            "{error}"
        );
        std::fs::write(&path, format!("{good}\n{run}\n")).unwrap();
        let error = read(&path).unwrap_err();
        assert!(
            matches!(
                error,
                ReadError::NotWrittenByPpcert {
                    line: 1,
                    why: crate::journal::order::OutOfOrder::BeforeRun,
                    ..
                }
            ),
            "{error}"
        );
        let missing = read(&dir.path().join("none.jsonl")).unwrap_err();
        assert!(matches!(missing, ReadError::Unreadable { .. }), "{missing}");
    }
}

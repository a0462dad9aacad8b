//! The journal's lines and reading them back: the crash-safe record `--resume` and `verify` read.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::order::{Order, Seen};
use crate::bounds::JOURNAL_LINE_BYTES;
use crate::record::{Exchange, StepEvent};
use crate::timestamp::Timestamp;

pub(crate) const FILE_NAME: &str = "journal.jsonl";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Line {
    /// The run's identity: everything needed to regenerate its data on resume.
    Run {
        run: Value,
    },
    /// Read by [`parse_line`], not by serde: an internally tagged enum buffers its content,
    /// which the raw JSON of a recorded [`crate::record::Body`] does not survive.
    #[serde(skip_deserializing)]
    Exchange(Box<Exchange>),
    /// A step began: if the run dies before its end, resume knows it may have taken effect.
    StepStarted {
        flow: String,
        step_index: usize,
    },
    Step(StepEvent),
    /// A write is about to be sent: if the run dies before its exchange line, resume knows a
    /// request was in flight and may have been processed.
    Sending {
        flow: String,
        step: String,
        operation: crate::models::Operation,
        method: String,
        url: String,
        at: Timestamp,
    },
    Resumed {
        at: Timestamp,
    },
    /// A request `ppcert proxy` forwarded that no configured endpoint recognised: neither
    /// checked nor counted, but on the record, so the evidence agrees with what the staging
    /// counted.
    Unrecognised {
        at: Timestamp,
        method: String,
        /// The path as the partner sent it, without its query (which may carry credentials).
        path: String,
        /// The upstream's status; absent when it did not answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
    /// The run's end. `requirements` and `flows` are how the run concluded, recorded so that
    /// `ppcert verify` re-derives the ledger and the verdict from the journal alone.
    End {
        at: Timestamp,
        complete: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requirements: Option<Vec<crate::scenario::Requirement>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flows: Option<Vec<FlowSummary>>,
    },
}

/// How one flow instance ended, as the evidence lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FlowSummary {
    pub label: String,
    pub flow: String,
    pub status: crate::engine::FlowStatus,
    pub reason: Option<String>,
}

pub(crate) struct Journal {
    pub(super) file: File,
    pub(super) path: PathBuf,
}

/// Where a run's whole exchanges are once memory keeps them slim: in the journal, except the
/// ones `kept_whole` (their line could not be written, so memory kept them as they were).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Archive {
    pub path: PathBuf,
    pub kept_whole: std::collections::HashSet<u64>,
}

/// The `type` of an exchange line and of a step line: lines of other kinds are passed over
/// unparsed.
pub(crate) const EXCHANGE_TAG: &str = "exchange";
pub(crate) const STEP_TAG: &str = "step";
pub(crate) const UNRECOGNISED_TAG: &str = "unrecognised";

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

impl Journal {
    /// Creates `dir/journal.jsonl`, or appends to it when resuming, after cutting off a torn
    /// last line (a full disk or a power cut mid-write) so the next line starts on its own.
    pub(crate) fn open(dir: &Path, append: bool) -> std::io::Result<Journal> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(FILE_NAME);
        if append {
            cut_torn_tail(&path)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&path)?;
        Ok(Journal { file, path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one line and flushes it to the OS, so a killed run loses nothing recorded.
    pub(crate) fn append(&mut self, line: &Line) -> std::io::Result<()> {
        let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        text.push('\n');
        self.file.write_all(text.as_bytes())?;
        self.file.flush()
    }
}

/// Truncates the file after its last newline: a line without one was never finished.
fn cut_torn_tail(path: &Path) -> std::io::Result<()> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if whole < bytes.len() {
        OpenOptions::new()
            .write(true)
            .open(path)?
            .set_len(whole as u64)?;
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

#[derive(Deserialize)]
struct Tag<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
}

/// The `type` of a journal line, parsing no more than needed: ppcert writes the tag first, so
/// its own lines are told by their start; a line written otherwise (spaced, keys reordered) by
/// its parsed tag, as [`read`] tells it: both must agree on what the record holds.
fn kind_of(line: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    if let Some(rest) = line.strip_prefix(br#"{"type":""#) {
        let end = rest.iter().position(|b| *b == b'"')?;
        return std::str::from_utf8(&rest[..end]).ok().map(Into::into);
    }
    serde_json::from_slice::<Tag>(line).ok().map(|tag| tag.kind)
}

pub(crate) fn parse_line(text: &str) -> serde_json::Result<Line> {
    if serde_json::from_str::<Tag>(text)?.kind == "exchange" {
        serde_json::from_str::<Exchange>(text).map(|exchange| Line::Exchange(Box::new(exchange)))
    } else {
        serde_json::from_str::<Line>(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::Operation;
    use crate::record::{Body, Outcome, RequestRecord, ResponseRecord};

    /// A line that carries text of the caller's choosing.
    fn sending(flow: &str) -> Line {
        Line::Sending {
            flow: flow.into(),
            step: "quote".into(),
            operation: Operation::Quote,
            method: "POST".into(),
            url: "http://127.0.0.1:1/quotes".into(),
            at: Timestamp::EPOCH,
        }
    }

    fn exchange() -> Exchange {
        Exchange {
            seq: 3,
            flow: "lifecycle#1".into(),
            step: "quote".into(),
            operation: Operation::Quote,
            booking_number: Some("PP-1".into()),
            attempt: 1,
            method: "POST".into(),
            url: "http://127.0.0.1:1/quotes".into(),
            started_at: Timestamp::parse("2026-11-21T10:00:00.000Z").unwrap(),
            duration_ms: 4,
            request: RequestRecord {
                headers: [("accept".to_string(), "application/JSON".to_string())].into(),
                body: Some(Body::from_value(
                    &serde_json::json!({"data": {"a": [1, "x"]}}),
                )),
                cut: None,
            },
            response: Some(ResponseRecord {
                full_json: None,
                status: 502,
                headers: Default::default(),
                body: Body::from_value(&serde_json::json!("<html>bad gateway</html>")),
                body_truncated: true,
                cut: None,
                tls_certificate_sha256: None,
                encoding: None,
            }),
            outcome: Outcome::Error,
            checks: Vec::new(),
            error: None,
            expectation: crate::record::Expectation::Refusal,
            retried: true,
            delivery: crate::record::Delivery::Reconciled,
            layout: None,
            reads: Vec::new(),
            token_fingerprint: None,
            poll: false,
        }
    }

    #[test]
    fn every_kind_of_line_reads_back_as_written() {
        let lines = [
            Line::Run {
                run: serde_json::json!({"id": "r"}),
            },
            Line::StepStarted {
                flow: "f".into(),
                step_index: 2,
            },
            Line::Exchange(Box::new(exchange())),
            Line::Unrecognised {
                at: Timestamp::EPOCH,
                method: "GET".into(),
                path: "/v1/health".into(),
                status: Some(200),
            },
            Line::End {
                at: Timestamp::EPOCH,
                complete: false,
                requirements: Some(Vec::new()),
                flows: None,
            },
        ];
        for line in lines {
            let text = serde_json::to_string(&line).unwrap();
            assert_eq!(parse_line(&text).unwrap(), line, "{text}");
        }
    }

    /// Typed in memory, the flags are written as evidence readers have always read them: each
    /// only when true, and `maybe_processed`/`reconciled` as two keys.
    #[test]
    fn an_exchanges_flags_keep_their_wire_form() {
        use crate::record::{Delivery, Expectation};
        let text = serde_json::to_string(&Line::Exchange(Box::new(exchange()))).unwrap();
        assert!(text.contains(r#""expected_error":true"#), "{text}");
        assert!(text.contains(r#""reconciled":true"#), "{text}");
        assert!(!text.contains("maybe_processed"), "{text}");
        let lost = text
            .replace(r#""expected_error":true"#, r#""expected_error":false"#)
            .replace(
                r#""reconciled":true"#,
                r#""maybe_processed":true,"reconciled":false"#,
            );
        let Line::Exchange(read) = parse_line(&lost).unwrap() else {
            panic!("not an exchange: {lost}");
        };
        assert_eq!(read.expectation, Expectation::Acceptance);
        assert_eq!(read.delivery, Delivery::MaybeProcessed);
    }

    #[test]
    fn a_recorded_body_is_written_as_json_not_as_a_string() {
        let text = serde_json::to_string(&Line::Exchange(Box::new(exchange()))).unwrap();
        assert!(text.starts_with(r#"{"type":"exchange","#), "{text}");
        assert!(text.contains(r#""body":{"data":{"a":[1,"x"]}}"#), "{text}");
        assert!(
            text.contains(r#""body":"<html>bad gateway</html>""#),
            "{text}"
        );
    }

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
                    why: super::super::order::OutOfOrder::BeforeRun,
                    ..
                }
            ),
            "{error}"
        );
        let missing = read(&dir.path().join("none.jsonl")).unwrap_err();
        assert!(matches!(missing, ReadError::Unreadable { .. }), "{missing}");
    }
}

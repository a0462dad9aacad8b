//! The journal's lines and reading them back: the crash-safe record `--resume` and `verify` read.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::order::{Order, Seen};
use crate::record::{Exchange, StepEvent};

pub const FILE_NAME: &str = "journal.jsonl";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
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
        at: String,
    },
    Resumed {
        at: String,
    },
    /// The run's end. `requirements` and `flows` are how the run concluded, recorded so that
    /// `ppcert verify` re-derives the ledger and the verdict from the journal alone.
    End {
        at: String,
        complete: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        requirements: Option<Vec<crate::scenario::Requirement>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flows: Option<Vec<FlowSummary>>,
    },
}

/// How one flow instance ended, as the evidence lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowSummary {
    pub label: String,
    pub flow: String,
    pub status: crate::engine::FlowStatus,
    pub reason: Option<String>,
}

pub struct Journal {
    pub(super) file: File,
    pub(super) path: PathBuf,
}

/// Where a run's whole exchanges are once memory keeps them slim: in the journal, except the
/// ones `kept_whole` (their line could not be written, so memory kept them as they were).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Archive {
    pub path: PathBuf,
    pub kept_whole: std::collections::HashSet<u64>,
}

impl Archive {
    /// Calls `each` with every exchange of the journal, in the order written, one line in
    /// memory at a time; stops early when `each` returns false.
    pub fn exchanges(
        &self,
        mut each: impl FnMut(Exchange) -> std::io::Result<bool>,
    ) -> std::io::Result<()> {
        use std::io::BufRead;
        let file = File::open(&self.path)?;
        for (number, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
            let line = line?;
            if !is_exchange(&line) {
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            let parsed = parse_line(&text).map_err(|e| {
                std::io::Error::other(format!("{}:{}: {e}", self.path.display(), number + 1))
            })?;
            if let Line::Exchange(exchange) = parsed
                && !each(*exchange)?
            {
                break;
            }
        }
        Ok(())
    }
}

impl Journal {
    /// Creates `dir/journal.jsonl`, or appends to it when resuming, after cutting off a torn
    /// last line (a full disk or a power cut mid-write) so the next line starts on its own.
    pub fn open(dir: &Path, append: bool) -> std::io::Result<Journal> {
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

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one line and flushes it to the OS, so a killed run loses nothing recorded.
    pub fn append(&mut self, line: &Line) -> std::io::Result<()> {
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

/// Reads a journal; a torn last line (the run was killed mid-write, even inside a UTF-8
/// character: it has no newline after it) is ignored, any other bad line is an error naming
/// its number. A finished last line that is not a journal line is such an error too: it was
/// not torn by a crash, and appending after it would leave it in the middle of the record.
/// So is a well-formed line out of the order ppcert writes (see [`Order`]).
pub fn read(path: &Path) -> Result<Vec<Line>, String> {
    Ok(read_numbered(path)?
        .into_iter()
        .map(|(_, line)| line)
        .collect())
}

/// [`read`], each line with its number in the file (from 1), for errors that name it.
pub fn read_numbered(path: &Path) -> Result<Vec<(usize, Line)>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let mut parsed = Vec::new();
    let mut order = Order::default();
    for (i, raw) in lines.iter().enumerate() {
        let torn = i + 1 == lines.len();
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
                order.next(seen(&line)).map_err(|e| {
                    format!("{}:{}: not a line ppcert wrote: {e}", path.display(), i + 1)
                })?;
                parsed.push((i + 1, line));
            }
            Ok(None) => {}
            Err(_) if torn => break,
            Err(e) => {
                return Err(format!(
                    "{}:{}: not a journal line: {e}",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    Ok(parsed)
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

/// Whether a journal line is an exchange's, parsing no more than needed: ppcert writes the
/// tag first, so its own lines are told by their start. A line written otherwise (spaced, keys
/// reordered) is told by its parsed tag, as [`read`] tells it: both must agree on what the
/// record holds.
fn is_exchange(line: &[u8]) -> bool {
    if line.starts_with(br#"{"type":""#) {
        return line.starts_with(br#"{"type":"exchange""#);
    }
    serde_json::from_slice::<Tag>(line).is_ok_and(|tag| tag.kind == "exchange")
}

pub fn parse_line(text: &str) -> serde_json::Result<Line> {
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
            started_at: "2026-11-21T10:00:00.000Z".into(),
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
            }),
            outcome: Outcome::Error,
            checks: Vec::new(),
            error: None,
            expected_error: false,
            retried: true,
            maybe_processed: false,
            reconciled: false,
            layout: None,
            reads: Vec::new(),
            token_fingerprint: None,
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
            Line::End {
                at: "t".into(),
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
        journal.append(&Line::Resumed { at: "é".into() }).unwrap();
        drop(journal);
        let path = dir.path().join(FILE_NAME);
        let mut bytes = std::fs::read(&path).unwrap();
        let torn = serde_json::to_string(&Line::Resumed { at: "é".into() }).unwrap();
        let cut = torn.find('é').unwrap() + 1; // inside the two bytes of é
        bytes.extend_from_slice(&torn.as_bytes()[..cut]);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read(&path).unwrap().len(), 2);
        let mut journal = Journal::open(dir.path(), true).unwrap();
        journal.append(&Line::Resumed { at: "b".into() }).unwrap();
        let lines = read(&path).unwrap();
        assert_eq!(
            lines.len(),
            3,
            "the torn tail is gone, the new line is whole"
        );
        assert_eq!(lines[2], Line::Resumed { at: "b".into() });
    }
}

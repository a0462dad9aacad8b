//! `journal.jsonl`: one JSON line per exchange and per step event, appended and flushed as the
//! run goes. It is the crash-safe record and the basis of `--resume`.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    End {
        at: String,
        complete: bool,
    },
}

pub struct Journal {
    file: File,
    path: PathBuf,
}

impl Journal {
    /// Creates `dir/journal.jsonl`, or appends to it when resuming.
    pub fn open(dir: &Path, append: bool) -> std::io::Result<Journal> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(FILE_NAME);
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

/// Reads a journal; a torn last line (the run was killed mid-write) is ignored, any other bad
/// line is an error naming its number.
pub fn read(path: &Path) -> Result<Vec<Line>, String> {
    let file = File::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut parsed = Vec::new();
    for (i, text) in lines.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        match parse_line(text) {
            Ok(line) => parsed.push(line),
            Err(_) if i + 1 == lines.len() => break,
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

/// One journal line: the tag is read first, so exchange lines parse straight into
/// [`Exchange`] (which ignores the `type` field) and every other kind through [`Line`].
pub fn parse_line(text: &str) -> serde_json::Result<Line> {
    #[derive(Deserialize)]
    struct Tag<'a> {
        #[serde(rename = "type", borrow)]
        kind: std::borrow::Cow<'a, str>,
    }
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
            },
            response: Some(ResponseRecord {
                status: 502,
                headers: Default::default(),
                body: Body::from_value(&serde_json::json!("<html>bad gateway</html>")),
                body_truncated: true,
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
}

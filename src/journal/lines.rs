//! The journal's lines and reading them back: the crash-safe record `--resume` and `verify` read.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// An attempt of a write is about to be sent (each retry has its own line): if the run
    /// dies before that attempt's exchange line, resume knows a request was in flight and may
    /// have been processed.
    Sending {
        flow: String,
        step: String,
        operation: crate::models::Operation,
        method: String,
        url: String,
        at: Timestamp,
        /// Which attempt of the call (1 the first). Absent from journals written before each
        /// attempt had a line of its own: such a line stands for the whole call, settled by
        /// its final attempt's exchange.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt: Option<u32>,
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
    /// `ppcert proxy --faults`: the plan in force, written when the session starts.
    FaultPlan {
        rules: Vec<crate::record::fault::FaultRule>,
    },
    /// A fault `ppcert proxy --faults` injected into the partner's traffic.
    Fault(crate::record::fault::InjectedFault),
    /// A webhook delivery `ppcert proxy --webhook-forward` passed on to the partner's receiver.
    Webhook(crate::record::fault::RelayedWebhook),
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
    pub status: crate::record::FlowStatus,
    pub reason: Option<String>,
}

pub(crate) struct Journal {
    pub(super) file: File,
    pub(super) path: PathBuf,
    /// The SHA-256 of every line written, for the manifest: reading a journal back to hash it
    /// was a tenth of a small run's end. `None` once the file holds other bytes than those
    /// (a resumed run's earlier lines, a write that failed part-way).
    pub(super) written: Option<sha2::Sha256>,
}

/// The `type` of an exchange line and of a step line: lines of other kinds are passed over
/// unparsed.
pub(crate) const EXCHANGE_TAG: &str = "exchange";
pub(crate) const STEP_TAG: &str = "step";
pub(crate) const UNRECOGNISED_TAG: &str = "unrecognised";
pub(crate) const FAULT_TAG: &str = "fault";
pub(crate) const FAULT_PLAN_TAG: &str = "fault_plan";
pub(crate) const WEBHOOK_TAG: &str = "webhook";

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
        Ok(Journal {
            file,
            path,
            written: (!append).then(<sha2::Sha256 as sha2::Digest>::new),
        })
    }

    /// The file's SHA-256 (lower-case hex), when it holds exactly the lines this journal wrote.
    pub(crate) fn sha256_hex(&self) -> Option<String> {
        let written = self.written.clone()?;
        Some(crate::digest::hex(&sha2::Digest::finalize(written)))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one line and flushes it to the OS, so a killed run loses nothing recorded.
    /// `line` is a [`Line`], or a borrowed spelling of one that serializes the same.
    pub(crate) fn append<L: Serialize>(&mut self, line: &L) -> std::io::Result<()> {
        let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        text.push('\n');
        let appended = (self.file.write_all(text.as_bytes())).and_then(|()| self.file.flush());
        match (&appended, &mut self.written) {
            (Ok(()), Some(written)) => sha2::Digest::update(written, text.as_bytes()),
            (Ok(()), None) => {}
            (Err(_), written) => *written = None,
        }
        appended
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

#[derive(Deserialize)]
struct Tag<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
}

/// The `type` of a journal line, parsing no more than needed: ppcert writes the tag first, so
/// its own lines are told by their start; a line written otherwise (spaced, keys reordered) by
/// its parsed tag, as [`parse_line`] tells it: both must agree on what the record holds.
pub(crate) fn kind_of(line: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
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
pub(crate) mod tests {
    use super::*;
    use crate::models::Operation;
    use crate::record::{Body, Outcome, RequestRecord, ResponseRecord};

    /// A line that carries text of the caller's choosing.
    pub(crate) fn sending(flow: &str) -> Line {
        Line::Sending {
            flow: flow.into(),
            step: "quote".into(),
            operation: Operation::Quote,
            method: "POST".into(),
            url: "http://127.0.0.1:1/quotes".into(),
            at: Timestamp::EPOCH,
            attempt: Some(1),
        }
    }

    pub(crate) fn exchange() -> Exchange {
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
            phase: Default::default(),
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

    /// The digest the manifest takes of a run's journal as it is written is the file's own;
    /// a resumed journal (earlier lines) and one a write failed in are read back instead.
    #[test]
    fn the_journal_s_digest_taken_as_written_is_the_file_s() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = Journal::open(dir.path(), false).unwrap();
        for flow in ["a#1", "b#2", "c#3"] {
            journal.append(&sending(flow)).unwrap();
        }
        let file = crate::digest::file_sha256_hex(journal.path()).unwrap();
        assert_eq!(journal.sha256_hex(), Some(file));
        let mut resumed = Journal::open(dir.path(), true).unwrap();
        resumed.append(&sending("d#4")).unwrap();
        assert_eq!(resumed.sha256_hex(), None, "resumed: read back");
        let mut full = Journal {
            file: OpenOptions::new().write(true).open("/dev/full").unwrap(),
            path: PathBuf::from("/dev/full"),
            written: Some(<sha2::Sha256 as sha2::Digest>::new()),
        };
        assert!(full.append(&sending("e#5")).is_err());
        assert_eq!(full.sha256_hex(), None, "a failed write: read back");
    }
}

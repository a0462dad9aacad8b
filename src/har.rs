//! HAR 1.2 (the HTTP Archive format browser devtools and HAR viewers open) from a bundle's
//! exchanges, read from its journal as recorded: redacted exactly as the evidence is (the
//! token was replaced before anything was written), so the archive holds no secret either.

use std::cell::{Cell, RefCell};
use std::io::BufRead;

use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use serde_json::{Value, json};

use crate::journal;
use crate::record::{Body, Exchange, ResponseRecord};

/// Writes the archive of the journal read from `journal_lines` to `out`, an entry at a time
/// as its exchange is read: the archive is never held, and its bytes are those of the whole
/// archive written at once (the same writer and key order, see [`Spliced`]).
pub(crate) fn write(
    journal_lines: impl BufRead,
    out: &mut impl std::io::Write,
) -> std::io::Result<usize> {
    let archive = json!({
        "log": {
            "version": "1.2",
            "creator": {"name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION")},
            "pages": [],
            "entries": [],
        }
    });
    let entries = Entries {
        lines: RefCell::new(Some(journal_lines)),
        count: Cell::new(0),
        failed: RefCell::new(None),
    };
    let spliced = Spliced {
        value: &archive,
        path: &["log", "entries"],
        entries: &entries,
    };
    let written = serde_json::to_writer_pretty(&mut *out, &spliced);
    if let Some(error) = entries.failed.take() {
        return Err(error);
    }
    written?;
    out.write_all(b"\n")?;
    Ok(entries.count.get())
}

/// A JSON value written as serde_json writes it, but for the array at `path`, which is the
/// journal's entries, read as they are written.
struct Spliced<'a, R> {
    value: &'a Value,
    path: &'a [&'a str],
    entries: &'a Entries<R>,
}

impl<R: BufRead> Serialize for Spliced<'_, R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (Value::Object(members), Some((first, rest))) = (self.value, self.path.split_first())
        else {
            return self.value.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(members.len()))?;
        for (key, value) in members {
            match (key == first, rest.is_empty()) {
                (true, true) => map.serialize_entry(key, self.entries)?,
                (true, false) => map.serialize_entry(
                    key,
                    &Spliced {
                        value,
                        path: rest,
                        entries: self.entries,
                    },
                )?,
                (false, _) => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// The journal's exchanges as HAR entries, read once, as they are serialised.
struct Entries<R> {
    lines: RefCell<Option<R>>,
    count: Cell<usize>,
    /// Why the journal could not be read, when it could not.
    failed: RefCell<Option<std::io::Error>>,
}

impl<R: BufRead> Serialize for Entries<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        let lines = self.lines.borrow_mut().take();
        for line in lines.into_iter().flat_map(BufRead::lines) {
            let line = match line {
                Ok(line) => line,
                Err(error) => {
                    *self.failed.borrow_mut() = Some(error);
                    return Err(S::Error::custom("the journal could not be read"));
                }
            };
            if !line.starts_with(r#"{"type":"exchange""#) {
                continue;
            }
            if let Ok(journal::Line::Exchange(exchange)) = journal::parse_line(&line) {
                seq.serialize_element(&entry(&exchange))?;
                self.count.set(self.count.get() + 1);
            }
        }
        seq.end()
    }
}

/// A body as HAR's `text`: a JSON body as its JSON text, text kept as a JSON string as the
/// text itself.
fn text(body: &Body) -> String {
    match body.to_value() {
        Value::String(text) => text,
        _ => body.json().to_string(),
    }
}

fn headers(headers: &std::collections::BTreeMap<String, String>) -> Vec<Value> {
    (headers.iter())
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect()
}

fn mime(headers: &std::collections::BTreeMap<String, String>) -> String {
    crate::record::header(headers, "content-type")
        .unwrap_or("application/json")
        .to_string()
}

fn entry(exchange: &Exchange) -> Value {
    let query: Vec<Value> = url::Url::parse(&exchange.url)
        .map(|url| {
            (url.query_pairs())
                .map(|(name, value)| json!({"name": name, "value": value}))
                .collect()
        })
        .unwrap_or_default();
    let request_headers = &exchange.request.headers;
    let mut request = json!({
        "method": exchange.method,
        "url": exchange.url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": headers(request_headers),
        "queryString": query,
        "headersSize": -1,
        "bodySize": -1,
    });
    if let Some(body) = exchange
        .request
        .body
        .as_ref()
        .filter(|b| b.json() != "null")
    {
        let text = text(body);
        request["bodySize"] = json!(text.len());
        request["postData"] = json!({"mimeType": mime(request_headers), "text": text});
    }
    let mut entry = json!({
        "startedDateTime": exchange.started_at.to_string(),
        "time": exchange.duration_ms,
        "request": request,
        "response": response(exchange.response.as_ref()),
        "cache": {},
        "timings": {"send": 0, "wait": exchange.duration_ms, "receive": 0},
        "comment": format!(
            "{} {} ({}), attempt {}: {:?}",
            exchange.flow, exchange.step, exchange.operation, exchange.attempt, exchange.outcome
        ),
    });
    if let Some(error) = &exchange.error {
        entry["_error"] = json!(error);
    }
    entry
}

fn response(response: Option<&ResponseRecord>) -> Value {
    let Some(response) = response else {
        // No answer (a timeout, a cut connection): HAR has status 0 for it.
        return json!({
            "status": 0, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": [], "content": {"size": 0, "mimeType": "x-unknown"},
            "redirectURL": "", "headersSize": -1, "bodySize": -1,
        });
    };
    let text = if response.body.json() == "null" {
        String::new()
    } else {
        text(&response.body)
    };
    let reason = reqwest::StatusCode::from_u16(response.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    json!({
        "status": response.status,
        "statusText": reason,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": headers(&response.headers),
        "content": {"size": text.len(), "mimeType": mime(&response.headers), "text": text},
        "redirectURL": response.header("location").unwrap_or(""),
        "headersSize": -1,
        "bodySize": -1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::Operation;
    use crate::record::{Body, Delivery, Expectation, Outcome, RequestRecord, ResponseRecord};

    fn exchange(seq: u64) -> Exchange {
        Exchange {
            seq,
            flow: "f#1".into(),
            step: "quote".into(),
            operation: Operation::Quote,
            booking_number: None,
            attempt: 1,
            method: "POST".into(),
            url: "http://127.0.0.1/quotes?a=1&b=two".into(),
            started_at: crate::timestamp::Timestamp::EPOCH,
            duration_ms: 3,
            request: RequestRecord {
                headers: [("content-type".to_string(), "application/json".to_string())].into(),
                body: Some(Body::from_value(&json!({"data": {"n": seq}}))),
                cut: None,
            },
            response: Some(ResponseRecord {
                status: 201,
                headers: Default::default(),
                body: Body::from_value(&json!({"data": {"id": format!("q{seq}")}})),
                body_truncated: false,
                full_json: None,
                cut: None,
                tls_certificate_sha256: None,
                encoding: None,
            }),
            outcome: Outcome::Error,
            checks: Vec::new(),
            error: None,
            expectation: Expectation::Acceptance,
            retried: false,
            delivery: Delivery::Answered,
            layout: None,
            reads: Vec::new(),
            token_fingerprint: None,
            poll: false,
            phase: Default::default(),
        }
    }

    /// The archive as it was written before it was streamed: every entry in memory, then
    /// the whole value pretty-printed.
    fn whole(journal: &str) -> String {
        let entries: Vec<Value> = (journal.lines())
            .filter_map(|line| match journal::parse_line(line) {
                Ok(journal::Line::Exchange(exchange)) => Some(entry(&exchange)),
                _ => None,
            })
            .collect();
        let archive = json!({"log": {
            "version": "1.2",
            "creator": {"name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION")},
            "pages": [],
            "entries": entries,
        }});
        serde_json::to_string_pretty(&archive).unwrap() + "\n"
    }

    #[test]
    fn the_streamed_archive_is_byte_for_byte_the_whole_one() {
        let line = |seq| serde_json::to_string(&journal::Line::Exchange(Box::new(exchange(seq))));
        let journal = format!(
            "{}\n{{\"type\":\"step\"}}\n{}\n",
            line(1).unwrap(),
            line(2).unwrap()
        );
        for (journal, entries) in [(journal.as_str(), 2), ("", 0)] {
            let mut out = Vec::new();
            let count = write(journal.as_bytes(), &mut out).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), whole(journal));
            assert_eq!(count, entries);
        }
    }
}

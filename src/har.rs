//! HAR 1.2 (the HTTP Archive format browser devtools and HAR viewers open) from a bundle's
//! exchanges, read from its journal as recorded: redacted exactly as the evidence is (the
//! token was replaced before anything was written), so the archive holds no secret either.

use std::io::BufRead;

use serde_json::{Value, json};

use crate::journal;
use crate::record::{Body, Exchange, ResponseRecord};

/// Writes the archive of the journal read from `journal_lines` to `out`.
pub(crate) fn write(
    journal_lines: impl BufRead,
    out: &mut impl std::io::Write,
) -> std::io::Result<usize> {
    let mut entries = Vec::new();
    for line in journal_lines.lines() {
        let line = line?;
        if !line.starts_with(r#"{"type":"exchange""#) {
            continue;
        }
        if let Ok(journal::Line::Exchange(exchange)) = journal::parse_line(&line) {
            entries.push(entry(&exchange));
        }
    }
    let count = entries.len();
    let archive = json!({
        "log": {
            "version": "1.2",
            "creator": {"name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION")},
            "pages": [],
            "entries": entries,
        }
    });
    serde_json::to_writer_pretty(&mut *out, &archive)?;
    out.write_all(b"\n")?;
    Ok(count)
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

//! What a request's body is on the wire: JSON (any JSON value, for a JSON media type), text as
//! its template rendered it (any other media type), or `multipart/form-data` parts (RFC 7578);
//! its bytes, the `Content-Type` it travels with, and what the evidence records of it.

use serde_json::{Value, json};

/// The media type ppcert sends a body as unless `Content-Type` is configured.
pub(crate) const DEFAULT_MEDIA_TYPE: &str = "application/json";

/// Whether `media_type` is JSON: `application/json`, or any `*/*+json` (RFC 6839), parameters
/// (`; charset=utf-8`) aside.
pub(crate) fn is_json(media_type: &str) -> bool {
    let essence = media_type.split(';').next().unwrap_or("").trim();
    let essence = essence.to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

/// A request body, ready to send.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Payload {
    /// Sent as its compact JSON text.
    Json(Value),
    /// Sent as is (a form, XML, plain text: whatever its media type says).
    Text(String),
    Multipart(Multipart),
}

/// `multipart/form-data` parts, in order, and the boundary between them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Multipart {
    pub boundary: String,
    pub parts: Vec<Part>,
}

/// One part as sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Part {
    pub name: String,
    pub content_type: String,
    pub filename: Option<String>,
    pub content: PartContent,
}

/// A part's content: what its template rendered (JSON parsed, so it is recorded as JSON), or
/// bytes from a file or a generated document, recorded by size and digest.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PartContent {
    Json(Value),
    Text(String),
    Bytes(std::sync::Arc<[u8]>),
}

impl PartContent {
    fn bytes(&self) -> Vec<u8> {
        match self {
            PartContent::Json(value) => value.to_string().into_bytes(),
            PartContent::Text(text) => text.clone().into_bytes(),
            PartContent::Bytes(bytes) => bytes.to_vec(),
        }
    }
}

impl Multipart {
    /// The parts with a boundary none of them contains: derived from their content, so a
    /// retried or resumed write sends the same bytes.
    pub(crate) fn new(parts: Vec<Part>) -> Multipart {
        let mut seed = Vec::new();
        for part in &parts {
            seed.extend_from_slice(part.name.as_bytes());
            seed.extend_from_slice(&part.content.bytes());
        }
        let mut salt = 0u32;
        loop {
            seed.extend_from_slice(&salt.to_be_bytes());
            let digest = crate::digest::sha256_hex(&seed);
            let boundary = format!("ppcert-{}", &digest[..32]);
            let clashes = parts.iter().any(|p| {
                let bytes = p.content.bytes();
                bytes
                    .windows(boundary.len())
                    .any(|w| w == boundary.as_bytes())
            });
            if !clashes {
                return Multipart { boundary, parts };
            }
            salt += 1;
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for part in &self.parts {
            out.extend_from_slice(format!("--{}\r\n", self.boundary).as_bytes());
            let mut disposition = format!("form-data; name=\"{}\"", quoted(&part.name));
            if let Some(filename) = &part.filename {
                disposition.push_str(&format!("; filename=\"{}\"", quoted(filename)));
            }
            out.extend_from_slice(format!("Content-Disposition: {disposition}\r\n").as_bytes());
            out.extend_from_slice(
                format!("Content-Type: {}\r\n\r\n", part.content_type).as_bytes(),
            );
            out.extend_from_slice(&part.content.bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        out
    }
}

/// A name or file name in a quoted `Content-Disposition` parameter: RFC 7578 §2 (as browsers
/// do) percent-encodes the quote and line breaks rather than escaping them.
fn quoted(name: &str) -> String {
    name.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

impl Payload {
    /// The bytes on the wire.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        match self {
            Payload::Json(value) => value.to_string().into_bytes(),
            Payload::Text(text) => text.clone().into_bytes(),
            Payload::Multipart(multipart) => multipart.bytes(),
        }
    }

    /// The `Content-Type` this payload must travel with whatever is configured: a multipart
    /// body's names its boundary.
    pub(crate) fn content_type(&self) -> Option<String> {
        match self {
            Payload::Multipart(m) => Some(format!("multipart/form-data; boundary={}", m.boundary)),
            _ => None,
        }
    }

    /// The JSON the body carries: the whole body, or a multipart body's first JSON part (the
    /// claim beside its document). None for text.
    pub(crate) fn json(&self) -> Option<&Value> {
        match self {
            Payload::Json(value) => Some(value),
            Payload::Text(_) => None,
            Payload::Multipart(m) => m.parts.iter().find_map(|p| match &p.content {
                PartContent::Json(value) => Some(value),
                _ => None,
            }),
        }
    }

    /// What the evidence records: the JSON itself, the text as a JSON string, or the parts in
    /// order (a file's or a document's content by size and SHA-256).
    pub(crate) fn record(&self) -> Value {
        match self {
            Payload::Json(value) => value.clone(),
            Payload::Text(text) => Value::String(text.clone()),
            Payload::Multipart(m) => {
                let parts: Vec<Value> = m.parts.iter().map(part_record).collect();
                json!({ "multipart/form-data": parts })
            }
        }
    }
}

fn part_record(part: &Part) -> Value {
    let mut record = json!({ "name": part.name, "content_type": part.content_type });
    if let Some(filename) = &part.filename {
        record["filename"] = json!(filename);
    }
    match &part.content {
        PartContent::Json(value) => record["body"] = value.clone(),
        PartContent::Text(text) => record["body"] = json!(text),
        PartContent::Bytes(bytes) => {
            record["size"] = json!(bytes.len());
            record["sha256"] = json!(crate::digest::sha256_hex(bytes));
        }
    }
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_media_types_are_json_whatever_their_parameters() {
        for json in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/vnd.api+json",
            "application/json-patch+json",
            "application/merge-patch+json",
        ] {
            assert!(is_json(json), "{json}");
        }
        for other in [
            "application/x-www-form-urlencoded",
            "text/plain",
            "application/jsonx",
            "multipart/form-data",
        ] {
            assert!(!is_json(other), "{other}");
        }
    }

    #[test]
    fn a_multipart_body_is_rfc_7578_with_its_parts_in_order() {
        let pdf: std::sync::Arc<[u8]> = b"%PDF-1.4 ...".to_vec().into();
        let payload = Payload::Multipart(Multipart::new(vec![
            Part {
                name: "claim".into(),
                content_type: "application/json".into(),
                filename: None,
                content: PartContent::Json(json!({"a": 1})),
            },
            Part {
                name: "document".into(),
                content_type: "application/pdf".into(),
                filename: Some("letter \"1\".pdf".into()),
                content: PartContent::Bytes(pdf.clone()),
            },
        ]));
        let Payload::Multipart(m) = &payload else {
            unreachable!()
        };
        let b = &m.boundary;
        let expected = format!(
            "--{b}\r\nContent-Disposition: form-data; name=\"claim\"\r\nContent-Type: application/json\r\n\r\n{{\"a\":1}}\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"document\"; filename=\"letter %221%22.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4 ...\r\n--{b}--\r\n"
        );
        assert_eq!(String::from_utf8(payload.bytes()).unwrap(), expected);
        assert_eq!(
            payload.content_type().unwrap(),
            format!("multipart/form-data; boundary={b}")
        );
        assert_eq!(payload.json(), Some(&json!({"a": 1})));
        let record = payload.record();
        let parts = &record["multipart/form-data"];
        assert_eq!(parts[0]["body"], json!({"a": 1}));
        assert_eq!(parts[1]["size"], json!(12));
        assert_eq!(parts[1]["sha256"], json!(crate::digest::sha256_hex(&pdf)));
    }

    /// A body is sent by its media type: text as rendered for a form, any JSON value (an
    /// array too) for a JSON type; the default stays JSON.
    #[test]
    fn the_media_type_decides_how_a_body_template_is_sent() {
        use crate::models::Operation;
        use std::collections::BTreeMap;
        let with = |content_type: &str, body: &str| {
            let table = crate::endpoints::EndpointOverride {
                body: Some(body.into()),
                headers: BTreeMap::from([("Content-Type".into(), content_type.into())]),
                ..Default::default()
            };
            let overrides = BTreeMap::from([("update".to_string(), table)]);
            let endpoints = crate::dialect::spec_with(&overrides).unwrap();
            let context = json!({"booking": {"number": "AB 1&2"}});
            endpoints
                .body(Operation::Update, &context, None)
                .unwrap()
                .unwrap()
        };
        let form = with(
            "application/x-www-form-urlencoded",
            "bookingNumber={{ booking.number | urlencode }}",
        );
        assert_eq!(form, Payload::Text("bookingNumber=AB%201%262".into()));
        assert_eq!(form.bytes(), b"bookingNumber=AB%201%262");
        assert_eq!(form.record(), json!("bookingNumber=AB%201%262"));
        let patch = with(
            "application/json-patch+json",
            r#"[{"op": "replace", "path": "/client/firstname", "value": "Ada"}]"#,
        );
        assert_eq!(patch.json().unwrap()[0]["op"], "replace");
        assert_eq!(
            patch.bytes(),
            br#"[{"op":"replace","path":"/client/firstname","value":"Ada"}]"#
        );
    }
}

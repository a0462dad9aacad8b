//! Captures: where a value is in an answer. Either a JSONPath template over the JSON body (as
//! before) or a header, optionally narrowed by a regex whose first group is the value (an id
//! that only a `Location` header carries).

use std::collections::BTreeMap;

use minijinja::{Environment, Value as Context};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{CaptureError, RenderError};
use crate::models::Operation;

/// A capture template's name: also what an error about it names (`endpoints.claim.capture.id`).
pub(super) fn capture_key(op: Operation, name: &str) -> String {
    format!("endpoints.{op}.capture.{name}")
}

/// One `[endpoints.NAME.capture]` value as written in `ppcert.toml`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum CaptureSpec {
    /// A minijinja template that renders to an RFC 9535 JSONPath over the JSON body.
    Path(String),
    /// `{ header = "Location", pattern = "/contracts/([^/]+)$" }`.
    Header(HeaderCapture),
}

/// A value read from an answer's header.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HeaderCapture {
    /// The header's name (`Location`, `ETag`).
    pub header: String,
    /// The first capture group is the value (the whole match when the regex has no group);
    /// without a pattern the header's whole value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

impl From<&str> for CaptureSpec {
    fn from(path: &str) -> CaptureSpec {
        CaptureSpec::Path(path.to_string())
    }
}

impl CaptureSpec {
    /// How the capture is shown in the evidence and in messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            CaptureSpec::Path(path) => path.clone(),
            CaptureSpec::Header(h) => match &h.pattern {
                Some(p) => format!("header {} matching {p}", h.header),
                None => format!("header {}", h.header),
            },
        }
    }
}

impl std::fmt::Display for CaptureSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl CaptureSpec {
    /// The value as `ppcert.toml` spells it: a string, or an inline table.
    pub(crate) fn to_toml(&self) -> String {
        let quoted = |text: &str| toml::Value::String(text.to_string()).to_string();
        match self {
            CaptureSpec::Path(path) => quoted(path),
            CaptureSpec::Header(h) => match &h.pattern {
                Some(p) => format!(
                    "{{ header = {}, pattern = {} }}",
                    quoted(&h.header),
                    quoted(p)
                ),
                None => format!("{{ header = {} }}", quoted(&h.header)),
            },
        }
    }
}

/// The part of an answer captures read: its JSON body and its headers (names in any case).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnswerView<'a> {
    pub body: &'a Value,
    pub headers: &'a BTreeMap<String, String>,
}

impl AnswerView<'_> {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        crate::record::header(self.headers, name)
    }
}

/// What a configured capture read from an answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Captured {
    /// Where it was read: the rendered JSONPath, or the header (and pattern).
    pub path: String,
    /// The first match; `None` when nothing matched.
    pub value: Option<Value>,
}

/// A compiled capture: a header capture's regex is compiled once.
#[derive(Debug, Clone)]
pub(super) enum Compiled {
    Path,
    Header {
        name: String,
        pattern: Option<regex::Regex>,
        shown: String,
    },
}

/// The values each operation's answer may be read for (docs/design.md, `ppcert.toml`).
pub(crate) fn capture_names(op: Operation) -> &'static [&'static str] {
    match op {
        Operation::Quote => &["id", "reference", "price_delta"],
        Operation::Subscription | Operation::Update => &["contract_id", "price_delta"],
        Operation::ReadContracts => &["contract_id", "claim_status"],
        Operation::Claim => &["claim_id", "claim_status"],
        Operation::QuoteDeletion | Operation::FlightCancellation => &[],
    }
}

/// Checks a capture's name and syntax: a header name and regex, or a template that renders
/// (against a sample product type) to a JSONPath.
pub(super) fn compile(
    env: &mut Environment<'static>,
    op: Operation,
    name: &str,
    spec: &CaptureSpec,
) -> Result<Compiled, CaptureError> {
    let known = capture_names(op);
    let name = name.to_string();
    // Any other name is the user's own value (`etag`), kept as `captured.NAME`; a built-in
    // name of another operation is a mistake, not a new value of the same name.
    let elsewhere = Operation::ALL
        .iter()
        .any(|other| capture_names(*other).contains(&name.as_str()));
    if (elsewhere && !known.contains(&name.as_str())) || !is_identifier(&name) {
        return Err(CaptureError::Unknown { name, op, known });
    }
    match spec {
        CaptureSpec::Header(h) => {
            if reqwest::header::HeaderName::from_bytes(h.header.as_bytes()).is_err() {
                let header = h.header.clone();
                return Err(CaptureError::NotAHeader { name, header });
            }
            let pattern = match &h.pattern {
                None => None,
                Some(p) => Some(
                    regex::Regex::new(p)
                        .map_err(|error| CaptureError::NotARegex { name, error })?,
                ),
            };
            Ok(Compiled::Header {
                name: h.header.clone(),
                pattern,
                shown: spec.describe(),
            })
        }
        CaptureSpec::Path(template) => {
            let key = capture_key(op, &name);
            let rendered = env
                .add_template_owned(key, template.to_string())
                .and_then(|()| super::template::lenient_render(template, "WITHDRAWAL"));
            let sample = match rendered {
                Ok(sample) => sample,
                Err(error) => return Err(CaptureError::Template { name, error }),
            };
            match serde_json_path::JsonPath::parse(sample.trim()) {
                Ok(_) => Ok(Compiled::Path),
                Err(error) => Err(CaptureError::NotAJsonPath {
                    name,
                    rendered: sample,
                    error,
                }),
            }
        }
    }
}

/// A name templates can read as `captured.NAME`: letters, digits and `_`, not a digit first.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Reads one value with a compiled capture.
pub(super) fn read(
    env: &Environment<'static>,
    compiled: &Compiled,
    key: &str,
    context: &Value,
    answer: AnswerView<'_>,
) -> Result<Captured, RenderError> {
    match compiled {
        Compiled::Header {
            name,
            pattern,
            shown,
        } => {
            let value = answer.header(name).and_then(|v| match pattern {
                None => Some(v.to_string()),
                Some(re) => re.captures(v).map(|c| {
                    c.get(1)
                        .or_else(|| c.get(0))
                        .map_or(String::new(), |m| m.as_str().to_string())
                }),
            });
            Ok(Captured {
                path: shown.clone(),
                value: value.filter(|v| !v.is_empty()).map(Value::String),
            })
        }
        Compiled::Path => {
            let path = env
                .get_template(key)
                .and_then(|t| t.render(Context::from(minijinja::value::Serde(context))))
                .map_err(|error| RenderError::Capture {
                    key: key.to_string(),
                    error,
                })?;
            let query = match serde_json_path::JsonPath::parse(path.trim()) {
                Ok(query) => query,
                Err(error) => {
                    let key = key.to_string();
                    return Err(RenderError::CaptureNotJsonPath { key, path, error });
                }
            };
            Ok(Captured {
                value: query.query(answer.body).first().cloned(),
                path: path.trim().to_string(),
            })
        }
    }
}

//! Endpoint definitions: method, path, body and captures per operation, overridable in
//! `ppcert.toml` (the spec does not show every call, nor any answer's layout). Paths, bodies and
//! captures are minijinja templates rendered with strict undefined behaviour; values inserted
//! into a path are percent-encoded; a rendered capture is an RFC 9535 JSONPath.

pub mod context;

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::{Environment, UndefinedBehavior, Value as Context};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::models::Operation;

/// Characters escaped in a path segment (RFC 3986 pchar complement).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'^')
    .add(b'|');

/// An `[endpoints.NAME]` table: every field optional, so a table overrides only what it names.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EndpointOverride {
    pub method: Option<String>,
    pub path: Option<String>,
    pub body: Option<String>,
    /// `[endpoints.NAME.capture]`: value name → JSONPath template.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, String>,
}

/// Why an endpoint definition was refused: the endpoint, the message, and the key at fault
/// (so the file's line can be named).
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointError {
    pub endpoint: String,
    pub message: String,
    pub key: Option<String>,
}

/// What a configured capture read from an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    /// The rendered JSONPath.
    pub path: String,
    /// The first match; `None` when nothing matched.
    pub value: Option<Value>,
}

#[derive(Debug, Clone)]
struct Endpoint {
    method: Method,
    has_body_template: bool,
    captures: std::collections::BTreeSet<String>,
}

/// The values each operation's answer may be read for (docs/design.md, `ppcert.toml`).
pub fn capture_names(op: Operation) -> &'static [&'static str] {
    match op {
        Operation::Quote => &["id", "reference", "price_delta"],
        Operation::Subscription | Operation::Update => &["contract_id", "price_delta"],
        Operation::ReadContracts => &["contract_id", "claim_status"],
        Operation::Claim => &["claim_id", "claim_status"],
        Operation::QuoteDeletion | Operation::FlightCancellation => &[],
    }
}

/// Checks a capture's name and, rendered against a sample context, its JSONPath syntax.
fn compile_capture(
    env: &mut Environment<'static>,
    op: Operation,
    name: &str,
    template: &str,
) -> Result<(), EndpointError> {
    let fail = |message: String| EndpointError {
        endpoint: op.as_str().to_string(),
        message,
        key: Some(name.to_string()),
    };
    let known = capture_names(op);
    if !known.contains(&name) {
        let known = if known.is_empty() {
            "none: nothing is read from this answer".to_string()
        } else {
            known.join(", ")
        };
        return Err(fail(format!(
            "capture.{name}: unknown value for {op} (known: {known})"
        )));
    }
    let key = format!("endpoints.{op}.capture.{name}");
    env.add_template_owned(key.clone(), template.to_string())
        .map_err(|e| fail(format!("capture.{name}: template: {e}")))?;
    let mut lenient = Environment::new();
    lenient.set_undefined_behavior(UndefinedBehavior::Lenient);
    lenient.set_fuel(Some(TEMPLATE_FUEL));
    let sample = lenient
        .render_str(
            template,
            minijinja::context! { product_type => "WITHDRAWAL" },
        )
        .map_err(|e| fail(format!("capture.{name}: template: {e}")))?;
    serde_json_path::JsonPath::parse(sample.trim())
        .map_err(|e| fail(format!("capture.{name}: `{sample}` is not a JSONPath: {e}")))?;
    Ok(())
}

/// The compiled endpoints of a run.
#[derive(Clone)]
pub struct Endpoints {
    endpoints: BTreeMap<Operation, Endpoint>,
    paths: Arc<Environment<'static>>,
    bodies: Arc<Environment<'static>>,
    captures: Arc<Environment<'static>>,
}

impl std::fmt::Debug for Endpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoints")
            .field("endpoints", &self.endpoints)
            .finish()
    }
}

/// Instructions one rendering may run: far more than any real body needs, few enough that a
/// runaway loop in a template ends in an error in milliseconds instead of hanging the run.
const TEMPLATE_FUEL: u64 = 1_000_000;

fn environment(encode_values: bool) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(TEMPLATE_FUEL));
    if encode_values {
        env.set_formatter(|out, _state, value| {
            let text = value
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| value.to_string());
            // A value of `.` or `..` would be a dot segment the URL resolves away, escaping
            // its place in the path: encoded, it stays one segment.
            let encoded = match text.as_str() {
                "." => "%2E".to_string(),
                ".." => "%2E%2E".to_string(),
                _ => utf8_percent_encode(&text, SEGMENT).to_string(),
            };
            out.write_str(&encoded).map_err(|_| {
                minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "write failed")
            })
        });
    }
    env
}

impl Endpoints {
    /// Compiles complete definitions (every operation with a method and a path).
    pub fn compile(
        definitions: &BTreeMap<String, EndpointOverride>,
    ) -> Result<Endpoints, EndpointError> {
        for name in definitions.keys() {
            if Operation::parse(name).is_none() {
                let known: Vec<&str> = Operation::ALL.iter().map(|o| o.as_str()).collect();
                return Err(EndpointError {
                    endpoint: name.clone(),
                    message: format!("unknown operation (known: {})", known.join(", ")),
                    key: None,
                });
            }
        }
        let (mut paths, mut bodies) = (environment(true), environment(false));
        let mut captures = environment(false);
        let mut endpoints = BTreeMap::new();
        for op in Operation::ALL {
            let custom = definitions.get(op.as_str()).cloned().unwrap_or_default();
            let fail = |what: &str, e: &dyn std::fmt::Display| EndpointError {
                endpoint: op.as_str().to_string(),
                message: format!("{what}: {e}"),
                key: what.split_whitespace().next().map(str::to_string),
            };
            let method = custom.method.ok_or_else(|| fail("method", &"missing"))?;
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes())
                .map_err(|e| fail("method", &e))?;
            let path = custom.path.ok_or_else(|| fail("path", &"missing"))?;
            if !path.starts_with('/') {
                return Err(fail("path", &"must start with /"));
            }
            paths
                .add_template_owned(op.as_str().to_string(), path)
                .map_err(|e| fail("path template", &e))?;
            let body = custom.body;
            let has_body_template = body.is_some();
            if let Some(body) = body {
                bodies
                    .add_template_owned(op.as_str().to_string(), body)
                    .map_err(|e| fail("body template", &e))?;
            }
            for (name, template) in &custom.capture {
                compile_capture(&mut captures, op, name, template)?;
            }
            endpoints.insert(
                op,
                Endpoint {
                    method,
                    has_body_template,
                    captures: custom.capture.keys().cloned().collect(),
                },
            );
        }
        Ok(Endpoints {
            endpoints,
            paths: Arc::new(paths),
            bodies: Arc::new(bodies),
            captures: Arc::new(captures),
        })
    }

    /// Reads `name` from an answer's JSON body with the configured capture; `None` when no
    /// capture is configured for it (the built-in reading applies).
    pub fn capture(
        &self,
        op: Operation,
        name: &str,
        context: &Value,
        body: &Value,
    ) -> Option<Result<Captured, String>> {
        if !self.endpoints[&op].captures.contains(name) {
            return None;
        }
        let key = format!("endpoints.{op}.capture.{name}");
        let rendered = self
            .captures
            .get_template(&key)
            .and_then(|t| t.render(Context::from(minijinja::value::Serde(context))));
        Some(match rendered {
            Err(e) => Err(format!("{key}: {e:#}")),
            Ok(path) => serde_json_path::JsonPath::parse(path.trim())
                .map_err(|e| format!("{key} rendered to `{path}`, not a JSONPath: {e}"))
                .map(|query| Captured {
                    value: query.query(body).first().cloned(),
                    path: path.trim().to_string(),
                }),
        })
    }

    /// Renders every path, body and capture of every operation against `sample` (a context
    /// and the default body per operation), so a typo such as `{{ quote.idd }}` is an error
    /// before the first request instead of a failure after some writes.
    pub fn rehearse(
        &self,
        sample: impl Fn(Operation) -> (Value, Option<Value>),
    ) -> Result<(), EndpointError> {
        for op in Operation::ALL {
            let (mut context, default_body) = sample(op);
            let fail = |what: &str, message: String| EndpointError {
                endpoint: op.as_str().to_string(),
                message: format!("{what} does not render with a sample booking: {message}"),
                key: Some(what.to_string()),
            };
            self.path(op, &context).map_err(|e| fail("path", e))?;
            if let Some(body) = &default_body {
                context["request"] = body.clone();
            }
            self.body(op, &context, default_body)
                .map_err(|e| fail("body", e))?;
            for name in &self.endpoints[&op].captures {
                if let Some(Err(e)) = self.capture(op, name, &context, &Value::Null) {
                    return Err(fail(name, e));
                }
            }
        }
        Ok(())
    }

    /// The operation's path template as written.
    pub fn path_template(&self, op: Operation) -> String {
        self.paths
            .get_template(op.as_str())
            .map(|t| t.source().to_string())
            .unwrap_or_default()
    }

    /// Whether the operation's body comes from a template rather than the API models.
    pub fn has_body_template(&self, op: Operation) -> bool {
        self.endpoints[&op].has_body_template
    }

    pub fn method(&self, op: Operation) -> Method {
        self.endpoints[&op].method.clone()
    }

    pub fn path(&self, op: Operation, context: &Value) -> Result<String, String> {
        let template = self
            .paths
            .get_template(op.as_str())
            .map_err(|e| e.to_string())?;
        template
            .render(Context::from(minijinja::value::Serde(context)))
            .map_err(|e| format!("endpoints.{op}.path: {e:#}"))
    }

    /// The body template's JSON if one is set, else `default` (built from the API models).
    pub fn body(
        &self,
        op: Operation,
        context: &Value,
        default: Option<Value>,
    ) -> Result<Option<Value>, String> {
        if !self.endpoints[&op].has_body_template {
            return Ok(default);
        }
        let template = self
            .bodies
            .get_template(op.as_str())
            .map_err(|e| e.to_string())?;
        let text = template
            .render(Context::from(minijinja::value::Serde(context)))
            .map_err(|e| format!("endpoints.{op}.body: {e:#}"))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("endpoints.{op}.body did not render to JSON: {e}"))
    }
}

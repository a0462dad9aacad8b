//! Endpoint definitions: method, path, body, headers, the statuses that mean success and
//! captures per operation, overridable in `ppcert.toml` (the spec does not show every call, nor
//! any answer's layout). Paths, bodies, headers and captures are minijinja templates rendered
//! with strict undefined behaviour; values inserted into a path are percent-encoded; a rendered
//! capture is an RFC 9535 JSONPath, or a capture reads a header.

pub(crate) mod capture;
mod compile;
pub(crate) mod confirm;
pub(crate) mod context;
mod dates;
mod error;
mod flow_reads;
mod letter;
mod part_error;
mod parts;
mod payload;
mod projected;
mod success;
mod template;
mod utc;
mod wait;
mod wait_error;

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::{Environment, Value as Context};
use reqwest::Method;
use serde_json::Value;

use crate::models::Operation;
pub(crate) use capture::{AnswerView, CaptureSpec, Captured, HeaderCapture};
use compile::{Endpoint, Templates, check_operation_names, compile_one, header_key};
pub(crate) use compile::{EndpointOverride, check_header_name};
pub(crate) use error::{CaptureError, EndpointError, EndpointProblem, RenderError};
pub(crate) use flow_reads::{CapturedTooEarly, FlowStep};
pub(crate) use payload::{PartContent, Payload, is_json};
pub(crate) use success::SuccessRule;
pub(crate) use wait::{Wait, WaitError, duration};
pub(crate) use wait_error::ConditionError;

/// The compiled endpoints of a run.
#[derive(Clone)]
pub(crate) struct Endpoints {
    endpoints: BTreeMap<Operation, Endpoint>,
    paths: Arc<Environment<'static>>,
    bodies: Arc<Environment<'static>>,
    headers: Arc<Environment<'static>>,
    captures: Arc<Environment<'static>>,
    /// `[endpoints.WRITE.confirm]` read templates and captures.
    confirms: Arc<Environment<'static>>,
    /// `[partner] bundle`: which entry of a multi-bundle quote answer is read.
    bundle: Option<String>,
    /// Where each operation's templates read `captured.NAME` (see `flow_reads.rs`).
    reads: Arc<flow_reads::FlowReads>,
    /// The top-level names each path template reads (see `projected.rs`).
    path_names: Arc<BTreeMap<Operation, Option<Vec<String>>>>,
}

impl std::fmt::Debug for Endpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoints")
            .field("endpoints", &self.endpoints)
            .finish()
    }
}

impl Endpoints {
    /// Compiles complete definitions (every operation with a method and a path).
    pub(crate) fn compile(
        definitions: &BTreeMap<String, EndpointOverride>,
    ) -> Result<Endpoints, EndpointError> {
        check_operation_names(definitions)?;
        let mut templates = Templates {
            paths: template::environment(true),
            bodies: template::environment(false),
            headers: template::environment(false),
            captures: template::environment(false),
            confirms: template::environment(false),
        };
        let mut endpoints = BTreeMap::new();
        for op in Operation::ALL {
            let custom = definitions.get(op.as_str()).cloned().unwrap_or_default();
            endpoints.insert(op, compile_one(op, custom, &mut templates)?);
        }
        let mut compiled = Endpoints {
            endpoints,
            paths: Arc::new(templates.paths),
            bodies: Arc::new(templates.bodies),
            headers: Arc::new(templates.headers),
            captures: Arc::new(templates.captures),
            confirms: Arc::new(templates.confirms),
            bundle: None,
            reads: Arc::default(),
            path_names: Arc::default(),
        };
        compiled.reads = Arc::new(compiled.find_reads());
        compiled.path_names = Arc::new(
            (Operation::ALL.into_iter())
                .map(|op| (op, projected::names(&compiled.paths, op.as_str())))
                .collect(),
        );
        Ok(compiled)
    }

    /// What each operation's templates read of `captured`, and what its answer gives.
    fn find_reads(&self) -> flow_reads::FlowReads {
        let mut all = BTreeMap::new();
        for op in Operation::ALL {
            let endpoint = &self.endpoints[&op];
            let mut templates = Vec::new();
            let key = format!("endpoints.{op}.path");
            flow_reads::add_reads(&mut templates, key, &self.paths, op.as_str());
            for name in &endpoint.headers {
                let key = format!("endpoints.{op}.headers.{name}");
                flow_reads::add_reads(&mut templates, key, &self.headers, &header_key(op, name));
            }
            if endpoint.has_body_template {
                let key = format!("endpoints.{op}.body");
                flow_reads::add_reads(&mut templates, key, &self.bodies, op.as_str());
            }
            for (index, part) in parts::template_keys(&endpoint.parts).iter().enumerate() {
                let key = format!("endpoints.{op}.parts[{}].body", index + 1);
                flow_reads::add_reads(&mut templates, key, &self.bodies, part);
            }
            for name in endpoint.captures.keys() {
                let key = capture::capture_key(op, name);
                flow_reads::add_reads(&mut templates, key.clone(), &self.captures, &key);
            }
            let wait = (endpoint.wait.as_ref()).map_or_else(Vec::new, |w| w.reads(&self.captures));
            let gives = self.may_capture(op);
            all.insert(
                op,
                flow_reads::OpReads {
                    templates,
                    wait,
                    gives,
                },
            );
        }
        flow_reads::FlowReads(all)
    }

    /// Every (template key, NAME) pair where a template of `op` reads `captured.NAME`.
    pub(crate) fn captured_reads(&self, op: Operation) -> &[(String, String)] {
        self.reads.templates(op)
    }

    /// Checks that every `captured.NAME` a call of the flow reads is captured by a call
    /// before it in `steps` (built-in values included: an answer may carry them).
    pub(crate) fn check_flow(
        &self,
        flow: &str,
        steps: &[FlowStep],
    ) -> Result<(), CapturedTooEarly> {
        self.reads.check_flow(flow, steps)
    }

    /// The bundle this partner sells (`[partner] bundle`), chosen from multi-bundle answers.
    pub(crate) fn with_bundle(mut self, bundle: Option<String>) -> Endpoints {
        self.bundle = bundle.filter(|b| !b.trim().is_empty());
        self
    }

    pub(crate) fn bundle(&self) -> Option<&str> {
        self.bundle.as_deref()
    }

    /// Reads `name` from an answer with the configured capture; `None` when no capture is
    /// configured for it (the built-in reading applies).
    pub(crate) fn capture(
        &self,
        op: Operation,
        name: &str,
        context: &Value,
        answer: AnswerView<'_>,
    ) -> Option<Result<Captured, RenderError>> {
        let compiled = self.endpoints[&op].captures.get(name)?;
        let key = capture::capture_key(op, name);
        Some(capture::read(
            &self.captures,
            compiled,
            &key,
            context,
            answer,
        ))
    }

    /// Renders every path, body, header and capture of every operation against `sample` (the
    /// context each operation gets and its default body), and checks that every attribute a
    /// template names is in that context, so a typo such as `{{ quote.idd }}` is an error
    /// before the first request instead of a failure after some writes.
    pub(crate) fn rehearse(
        &self,
        sample: impl Fn(Operation) -> (Value, Option<Value>),
    ) -> Result<(), EndpointError> {
        let captured = self.sample_captured();
        for op in Operation::ALL {
            let (mut context, default_body) = sample(op);
            context["captured"] = captured.clone();
            let fail = |key: &str, error: RenderError, context: &Value| {
                let key = key.to_string();
                // A misspelt attribute piped to `tojson` is named like any other.
                let problem = match error.undefined_attribute() {
                    Some(attribute) => EndpointProblem::UnknownAttribute {
                        key,
                        there: template::what_is_there(context, &attribute, op),
                        attribute,
                        op,
                    },
                    None => EndpointProblem::Unrendered { key, error },
                };
                EndpointError::new(op, problem)
            };
            // Names first: a typo is named with what its mapping holds, before a rendering
            // fails on it in minijinja's words.
            self.strict_names(op, &context)?;
            self.path(op, &context)
                .map_err(|e| fail("path", e, &context))?;
            self.headers(op, &context)
                .map_err(|e| fail("headers", e, &context))?;
            if let Some(body) = &default_body {
                context["request"] = body.clone();
            }
            let endpoint = &self.endpoints[&op];
            if endpoint.has_body_template {
                self.unknown_in(&self.bodies, op.as_str(), "body", op, &context)?;
            }
            for part in parts::template_keys(&endpoint.parts) {
                self.unknown_in(&self.bodies, &part, "body", op, &context)?;
            }
            self.body(op, &context, default_body)
                .map_err(|e| fail("body", e, &context))?;
            let empty = BTreeMap::new();
            let answer = AnswerView {
                body: &Value::Null,
                headers: &empty,
            };
            for name in endpoint.captures.keys() {
                if let Some(Err(e)) = self.capture(op, name, &context, answer) {
                    return Err(fail(name, e, &context));
                }
            }
            self.rehearse_wait(op, &context)?;
        }
        Ok(())
    }

    /// A wait's condition names only what its call's context holds, and evaluates over it.
    fn rehearse_wait(&self, op: Operation, context: &Value) -> Result<(), EndpointError> {
        let Some(wait) = &self.endpoints[&op].wait else {
            return Ok(());
        };
        let fail = |error| EndpointError::new(op, EndpointProblem::WaitCondition(error));
        wait.rehearse(&self.captures, op, context).map_err(fail)
    }

    /// Every value some endpoint may capture, with a sample value: what `captured` may hold.
    fn sample_captured(&self) -> Value {
        let mut names = serde_json::Map::new();
        for op in Operation::ALL {
            for name in self.may_capture(op) {
                names.insert(name, Value::String("sample".into()));
            }
        }
        Value::Object(names)
    }

    /// The names an answer of `op` may give `captured`: its built-in values and the captures
    /// configured for it.
    pub(crate) fn may_capture(&self, op: Operation) -> Vec<String> {
        let mut names: Vec<String> = capture::capture_names(op)
            .iter()
            .map(|n| n.to_string())
            .collect();
        for name in self.endpoints[&op].captures.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// The captures configured for `op` whose names are no built-in value: read from every
    /// answer of `op`, by the engine, into `captured`.
    pub(crate) fn named_captures(&self, op: Operation) -> Vec<String> {
        let builtin = capture::capture_names(op);
        (self.endpoints[&op].captures.keys())
            .filter(|name| !builtin.contains(&name.as_str()))
            .cloned()
            .collect()
    }

    /// The operation's wait, if it has one.
    pub(crate) fn wait(&self, op: Operation) -> Option<&Wait> {
        self.endpoints[&op].wait.as_ref()
    }

    /// The write's `[endpoints.WRITE.confirm]`, if it has one.
    pub(crate) fn confirm(&self, op: Operation) -> Option<&confirm::Confirm> {
        self.endpoints[&op].confirm.as_ref()
    }

    /// How often and how long a write's outcome is read: its table's, else the defaults.
    pub(crate) fn confirm_bounds(
        &self,
        op: Operation,
    ) -> (std::time::Duration, std::time::Duration) {
        self.confirm(op)
            .map_or((confirm::DEFAULT_EVERY, confirm::DEFAULT_TIMEOUT), |c| {
                (c.every, c.timeout)
            })
    }

    /// The write's confirmation read, rendered: a path, or an absolute URL.
    pub(crate) fn confirm_read(
        &self,
        op: Operation,
        context: &Value,
    ) -> Result<String, RenderError> {
        let key = confirm::read_key(op);
        (self.confirms.get_template(&key))
            .and_then(|t| t.render(Context::from(minijinja::value::Serde(context))))
            .map(|text| text.trim().to_string())
            .map_err(|error| RenderError::ConfirmRead { op, error })
    }

    /// Whether the write's confirmation condition holds over the confirming answer's context.
    pub(crate) fn confirm_holds(
        &self,
        op: Operation,
        context: &Value,
    ) -> Option<Result<bool, ConditionError>> {
        let until = self.confirm(op)?.until.as_ref()?;
        let key = format!("endpoints.{op}.confirm.until");
        Some((until.holds(&self.confirms, context)).map_err(|e| e.under(key)))
    }

    /// Reads `name` from a confirming answer of write `op` with its confirm table's capture;
    /// `None` when the table has none of that name.
    pub(crate) fn confirm_capture(
        &self,
        op: Operation,
        name: &str,
        context: &Value,
        answer: AnswerView<'_>,
    ) -> Option<Result<Captured, RenderError>> {
        let compiled = self.confirm(op)?.captures.get(name)?;
        let key = capture::capture_key(op, name);
        Some(capture::read(
            &self.confirms,
            compiled,
            &key,
            context,
            answer,
        ))
    }

    /// The names the write's confirm table captures.
    pub(crate) fn confirm_captures(&self, op: Operation) -> Vec<String> {
        self.confirm(op)
            .map(|c| c.captures.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether the operation's wait condition holds over `context`.
    pub(crate) fn wait_holds(&self, wait: &Wait, context: &Value) -> Result<bool, ConditionError> {
        wait.holds(&self.captures, context)
    }

    /// Paths, headers and captures name only attributes the operation's context holds.
    fn strict_names(&self, op: Operation, context: &Value) -> Result<(), EndpointError> {
        self.unknown_in(&self.paths, op.as_str(), "path", op, context)?;
        for name in &self.endpoints[&op].headers {
            self.unknown_in(&self.headers, &header_key(op, name), name, op, context)?;
        }
        for (name, compiled) in &self.endpoints[&op].captures {
            if matches!(compiled, capture::Compiled::Path) {
                let key = capture::capture_key(op, name);
                self.unknown_in(&self.captures, &key, name, op, context)?;
            }
        }
        Ok(())
    }

    fn unknown_in(
        &self,
        env: &Environment<'static>,
        template: &str,
        key: &str,
        op: Operation,
        context: &Value,
    ) -> Result<(), EndpointError> {
        match template::unknown_attribute(env, template, context) {
            None => Ok(()),
            Some(attribute) => Err(EndpointError::new(
                op,
                EndpointProblem::UnknownAttribute {
                    key: key.to_string(),
                    there: template::what_is_there(context, &attribute, op),
                    attribute,
                    op,
                },
            )),
        }
    }

    /// The operation's path template as written.
    pub(crate) fn path_template(&self, op: Operation) -> String {
        self.paths
            .get_template(op.as_str())
            .map(|t| t.source().to_string())
            .unwrap_or_default()
    }

    /// Whether the operation's body comes from a template rather than the API models.
    pub(crate) fn has_body_template(&self, op: Operation) -> bool {
        let endpoint = &self.endpoints[&op];
        endpoint.has_body_template || !endpoint.parts.is_empty()
    }

    pub(crate) fn method(&self, op: Operation) -> Method {
        self.endpoints[&op].method.clone()
    }

    /// The statuses that mean the operation succeeded.
    pub(crate) fn success(&self, op: Operation) -> SuccessRule {
        self.endpoints[&op].success.clone()
    }

    /// Whether the operation's headers carry the write's idempotency key, so a staging can
    /// recognise a retried write as the same one.
    pub(crate) fn sends_idempotency_key(&self, op: Operation) -> bool {
        self.endpoints[&op].headers.iter().any(|name| {
            self.headers
                .get_template(&header_key(op, name))
                // The variables the template reads, not its text: a comment or a longer
                // name that merely contains the word is no key.
                .is_ok_and(|t| t.undeclared_variables(false).contains("idempotency_key"))
        })
    }

    pub(crate) fn path(&self, op: Operation, context: &Value) -> Result<String, RenderError> {
        let template = self
            .paths
            .get_template(op.as_str())
            .map_err(RenderError::NoTemplate)?;
        let names = self.path_names.get(&op).and_then(Option::as_deref);
        template
            .render(projected::context(context, names))
            .map_err(|error| RenderError::Path { op, error })
    }

    /// The configured extra headers, rendered.
    pub(crate) fn headers(
        &self,
        op: Operation,
        context: &Value,
    ) -> Result<Vec<(String, String)>, RenderError> {
        let mut out = Vec::new();
        for name in &self.endpoints[&op].headers {
            let value = self
                .headers
                .get_template(&header_key(op, name))
                .and_then(|t| t.render(Context::from(minijinja::value::Serde(context))))
                .map_err(|error| RenderError::Header {
                    op,
                    name: name.clone(),
                    error,
                })?;
            if reqwest::header::HeaderValue::from_str(&value).is_err() {
                let name = name.clone();
                return Err(RenderError::HeaderValue { op, name });
            }
            out.push((name.clone(), value));
        }
        Ok(out)
    }

    /// The media type the operation's body is sent as: its `Content-Type` header as
    /// configured (the endpoint's, `[target.headers]` or `--header`), else JSON.
    pub(crate) fn media_type(&self, op: Operation, context: &Value) -> String {
        let configured = self.endpoints[&op]
            .headers
            .iter()
            .rfind(|name| name.eq_ignore_ascii_case("content-type"));
        configured
            .and_then(|name| self.headers.get_template(&header_key(op, name)).ok())
            .and_then(|t| {
                t.render(Context::from(minijinja::value::Serde(context)))
                    .ok()
            })
            .unwrap_or_else(|| payload::DEFAULT_MEDIA_TYPE.to_string())
    }

    /// The body to send: the parts rendered when the endpoint has any; else the body
    /// template's rendering (any JSON value when the media type is JSON, the text as rendered
    /// when not); else `default` (built from the API models).
    pub(crate) fn body(
        &self,
        op: Operation,
        context: &Value,
        default: Option<Value>,
    ) -> Result<Option<Payload>, RenderError> {
        let endpoint = &self.endpoints[&op];
        if !endpoint.parts.is_empty() {
            let multipart = parts::render(op, &endpoint.parts, &self.bodies, context)?;
            return Ok(Some(Payload::Multipart(multipart)));
        }
        if !endpoint.has_body_template {
            return Ok(default.map(Payload::Json));
        }
        let template = self
            .bodies
            .get_template(op.as_str())
            .map_err(RenderError::NoTemplate)?;
        let text = template
            .render(Context::from(minijinja::value::Serde(context)))
            .map_err(|error| RenderError::Body { op, error })?;
        if !is_json(&self.media_type(op, context)) {
            return Ok(Some(Payload::Text(text)));
        }
        serde_json::from_str(&text)
            .map(|value| Some(Payload::Json(value)))
            .map_err(|error| RenderError::BodyNotJson { op, error })
    }
}

#[cfg(test)]
mod render_tests;

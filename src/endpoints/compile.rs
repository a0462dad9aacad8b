//! One `[endpoints.NAME]` table compiled: its method checked, its path, body, header and
//! capture templates added to the run's environments, its success rule and wait read.

use std::collections::BTreeMap;

use minijinja::Environment;
use reqwest::Method;
use serde::{Deserialize, Serialize};

use super::capture::{self, CaptureSpec};
use super::confirm::{Confirm, ConfirmSpec};
use super::error::{EndpointError, EndpointProblem};
use super::parts::{self, PartSpec};
use super::success::SuccessRule;
use super::wait::{Wait, WaitSpec};
use crate::models::Operation;

/// Headers a definition may not set: ppcert sends them itself, and a second `Authorization`
/// would put a token into the configuration. (`Content-Type` and `Accept` may be set: a
/// staging may want its own media type.)
const RESERVED_HEADERS: [&str; 2] = ["authorization", "host"];

/// An `[endpoints.NAME]` table: every field optional, so a table overrides only what it names.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EndpointOverride {
    /// The HTTP method (`POST`, `PUT`, `DELETE`, …).
    pub method: Option<String>,
    /// The path under the base URL: a template whose values are percent-encoded.
    pub path: Option<String>,
    /// The request body: a template rendering JSON for a JSON media type, sent as rendered
    /// for any other.
    pub body: Option<String>,
    /// `[endpoints.NAME.headers]`: extra request headers, each value a template.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The statuses that mean success; default any 2xx.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Vec<u16>>,
    /// `[endpoints.NAME.capture]`: value name → JSONPath template or header capture.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, CaptureSpec>,
    /// `[endpoints.NAME.wait]`: repeat the request until a condition over its answer holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<WaitSpec>,
    /// `[endpoints.WRITE.confirm]`: after a write's success answer, read until its outcome shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<ConfirmSpec>,
    /// `[[endpoints.NAME.parts]]`: a `multipart/form-data` body, its parts in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartSpec>,
}

/// One operation's definition, compiled; its templates are in the run's environments.
#[derive(Debug, Clone)]
pub(super) struct Endpoint {
    pub(super) method: Method,
    pub(super) has_body_template: bool,
    pub(super) captures: BTreeMap<String, capture::Compiled>,
    /// Header names as configured, in order; their templates are in `Endpoints::headers`.
    pub(super) headers: Vec<String>,
    pub(super) success: SuccessRule,
    pub(super) wait: Option<Wait>,
    pub(super) confirm: Option<Confirm>,
    /// The multipart body's parts, when the endpoint has any (then it has no body template).
    pub(super) parts: Vec<parts::CompiledPart>,
}

/// The key of a header's template: `quote/X-Partner`.
pub(super) fn header_key(op: Operation, name: &str) -> String {
    format!("{op}/{name}")
}

/// The template environments being filled while definitions compile.
pub(super) struct Templates {
    pub(super) paths: Environment<'static>,
    pub(super) bodies: Environment<'static>,
    pub(super) headers: Environment<'static>,
    pub(super) captures: Environment<'static>,
    /// Confirmation reads and captures (`[endpoints.WRITE.confirm]`), never percent-encoded.
    pub(super) confirms: Environment<'static>,
}

/// Every `[endpoints.NAME]` names an operation of the API.
pub(super) fn check_operation_names(
    definitions: &BTreeMap<String, EndpointOverride>,
) -> Result<(), EndpointError> {
    for name in definitions.keys() {
        if Operation::parse(name).is_none() {
            return Err(EndpointError {
                endpoint: name.clone(),
                problem: EndpointProblem::UnknownOperation,
            });
        }
    }
    Ok(())
}

/// Compiles one operation's definition into `templates`.
pub(super) fn compile_one(
    op: Operation,
    custom: EndpointOverride,
    templates: &mut Templates,
) -> Result<Endpoint, EndpointError> {
    let fail = |problem: EndpointProblem| EndpointError::new(op, problem);
    let method = custom
        .method
        .clone()
        .ok_or(fail(EndpointProblem::NoMethod))?;
    let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).map_err(|e| {
        fail(EndpointProblem::BadMethod {
            reason: e.to_string(),
            method,
        })
    })?;
    let path = custom.path.clone().ok_or(fail(EndpointProblem::NoPath))?;
    if !path.starts_with('/') {
        return Err(fail(EndpointProblem::RelativePath { path }));
    }
    (templates.paths)
        .add_template_owned(op.as_str().to_string(), path)
        .map_err(|e| fail(EndpointProblem::PathTemplate(e)))?;
    let parts = compile_body(op, &custom, templates).map_err(fail)?;
    let has_body_template = custom.body.is_some();
    let mut headers = Vec::new();
    for (name, value) in custom.headers {
        check_header_name(&name).map_err(fail)?;
        (templates.headers)
            .add_template_owned(header_key(op, &name), value)
            .map_err(|error| {
                fail(EndpointProblem::HeaderTemplate {
                    name: name.clone(),
                    error,
                })
            })?;
        headers.push(name);
    }
    let success = SuccessRule::new(op, custom.expect).map_err(fail)?;
    let mut captures = BTreeMap::new();
    for (name, spec) in &custom.capture {
        let compiled = capture::compile(&mut templates.captures, op, name, spec)
            .map_err(|e| fail(e.into()))?;
        captures.insert(name.clone(), compiled);
    }
    let (wait, confirm) = reads_after(op, &custom.wait, &custom.confirm, templates)?;
    Ok(Endpoint {
        method,
        has_body_template,
        captures,
        headers,
        success,
        wait,
        confirm,
        parts,
    })
}

/// The endpoint's wait (a read's only: a write's would send it again) and confirmation (a
/// write's only).
fn reads_after(
    op: Operation,
    wait: &Option<WaitSpec>,
    confirm: &Option<ConfirmSpec>,
    templates: &mut Templates,
) -> Result<(Option<Wait>, Option<Confirm>), EndpointError> {
    let fail = |problem: EndpointProblem| EndpointError::new(op, problem);
    if wait.is_some() && op.is_write() {
        return Err(fail(EndpointProblem::WaitOnWrite { op }));
    }
    let confirm = match confirm {
        Some(spec) => Some(
            spec.check(op, &mut templates.confirms)
                .map_err(|e| fail(e.into()))?,
        ),
        None => None,
    };
    let wait = match wait {
        Some(spec) => Some(
            spec.check(&templates.captures)
                .map_err(|e| fail(e.into()))?,
        ),
        None => None,
    };
    Ok((wait, confirm))
}

/// The body template or the multipart parts (one or the other), into `templates.bodies`.
fn compile_body(
    op: Operation,
    custom: &EndpointOverride,
    templates: &mut Templates,
) -> Result<Vec<parts::CompiledPart>, EndpointProblem> {
    if custom.body.is_some() && !custom.parts.is_empty() {
        return Err(EndpointProblem::BodyAndParts);
    }
    if let Some(body) = &custom.body {
        (templates.bodies)
            .add_template_owned(op.as_str().to_string(), body.clone())
            .map_err(EndpointProblem::BodyTemplate)?;
    }
    parts::compile(op, &custom.parts, &mut templates.bodies)
}

/// A header a definition may set: not one ppcert sets itself, and a valid name.
pub(crate) fn check_header_name(name: &str) -> Result<(), EndpointProblem> {
    let name = name.to_string();
    if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(EndpointProblem::ReservedHeader { name });
    }
    match reqwest::header::HeaderName::from_bytes(name.as_bytes()) {
        Ok(_) => Ok(()),
        Err(_) => Err(EndpointProblem::BadHeaderName { name }),
    }
}

//! Endpoint definitions: method, path and body per operation, overridable in `ppcert.toml`
//! (the spec does not show every call). Paths and bodies are minijinja templates rendered with
//! strict undefined behaviour; values inserted into a path are percent-encoded.

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

/// The DESIGN.md default for the flight-cancellation report, a call the spec does not show.
pub const FLIGHT_CANCELLATION_BODY: &str = r#"{"data": {"bookingNumber": {{ booking.number | tojson }},
  "airlineIata": {{ flight.airlineIata | tojson }}, "number": {{ flight.number | tojson }},
  "departureDate": {{ flight.departureDate | tojson }}}}"#;

/// An `[endpoints.NAME]` table.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EndpointOverride {
    pub method: Option<String>,
    pub path: Option<String>,
    pub body: Option<String>,
}

#[derive(Debug, Clone)]
struct Endpoint {
    method: Method,
    has_body_template: bool,
}

/// The compiled endpoints of a run.
#[derive(Clone)]
pub struct Endpoints {
    endpoints: BTreeMap<Operation, Endpoint>,
    paths: Arc<Environment<'static>>,
    bodies: Arc<Environment<'static>>,
}

impl std::fmt::Debug for Endpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoints")
            .field("endpoints", &self.endpoints)
            .finish()
    }
}

fn defaults(op: Operation) -> (Method, &'static str, Option<&'static str>) {
    match op {
        Operation::Quote => (Method::POST, "/quotes", None),
        Operation::Subscription => (Method::POST, "/subscriptions", None),
        Operation::Update => (Method::PATCH, "/subscriptions/{{ booking.number }}", None),
        Operation::ReadContracts => (
            Method::GET,
            "/subscriptions/{{ booking.number }}/contracts",
            None,
        ),
        Operation::Claim => (Method::POST, "/contracts/{{ contract.id }}/claims", None),
        Operation::QuoteDeletion => (Method::DELETE, "/quotes/{{ quote.id }}", None),
        Operation::FlightCancellation => (
            Method::POST,
            "/flight-cancellations",
            Some(FLIGHT_CANCELLATION_BODY),
        ),
    }
}

fn environment(encode_values: bool) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    if encode_values {
        env.set_formatter(|out, _state, value| {
            let text = value
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| value.to_string());
            out.write_str(&utf8_percent_encode(&text, SEGMENT).to_string())
                .map_err(|_| {
                    minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "write failed")
                })
        });
    }
    env
}

impl Endpoints {
    /// Defaults with `[endpoints.*]` overrides applied; an error names the endpoint.
    pub fn with_overrides(
        overrides: &BTreeMap<String, EndpointOverride>,
    ) -> Result<Endpoints, (String, String)> {
        for name in overrides.keys() {
            if Operation::parse(name).is_none() {
                let known: Vec<&str> = Operation::ALL.iter().map(|o| o.as_str()).collect();
                return Err((
                    name.clone(),
                    format!("unknown operation (known: {})", known.join(", ")),
                ));
            }
        }
        let (mut paths, mut bodies) = (environment(true), environment(false));
        let mut endpoints = BTreeMap::new();
        for op in Operation::ALL {
            let (method, path, body) = defaults(op);
            let custom = overrides.get(op.as_str()).cloned().unwrap_or_default();
            let fail = |what: &str, e: &dyn std::fmt::Display| {
                (op.as_str().to_string(), format!("{what}: {e}"))
            };
            let method = match custom.method {
                Some(m) => Method::from_bytes(m.to_ascii_uppercase().as_bytes())
                    .map_err(|e| fail("method", &e))?,
                None => method,
            };
            let path = custom.path.unwrap_or_else(|| path.to_string());
            if !path.starts_with('/') {
                return Err(fail("path", &"must start with /"));
            }
            paths
                .add_template_owned(op.as_str().to_string(), path)
                .map_err(|e| fail("path template", &e))?;
            let body = custom.body.or(body.map(str::to_string));
            let has_body_template = body.is_some();
            if let Some(body) = body {
                bodies
                    .add_template_owned(op.as_str().to_string(), body)
                    .map_err(|e| fail("body template", &e))?;
            }
            endpoints.insert(
                op,
                Endpoint {
                    method,
                    has_body_template,
                },
            );
        }
        Ok(Endpoints {
            endpoints,
            paths: Arc::new(paths),
            bodies: Arc::new(bodies),
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn path_values_are_percent_encoded_and_undefined_is_an_error() {
        let endpoints = Endpoints::with_overrides(&BTreeMap::new()).unwrap();
        let path = endpoints
            .path(Operation::Claim, &json!({"contract": {"id": "a/b c"}}))
            .unwrap();
        assert_eq!(path, "/contracts/a%2Fb%20c/claims");
        assert!(endpoints.path(Operation::Claim, &json!({})).is_err());
    }

    #[test]
    fn overrides_are_checked_by_name_and_syntax() {
        let mut overrides = BTreeMap::new();
        overrides.insert("quote_removal".to_string(), EndpointOverride::default());
        assert_eq!(
            Endpoints::with_overrides(&overrides).unwrap_err().0,
            "quote_removal"
        );
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "quote_deletion".to_string(),
            EndpointOverride {
                path: Some("/q/{{ quote.id ".into()),
                ..Default::default()
            },
        );
        assert!(Endpoints::with_overrides(&overrides).is_err());
    }
}

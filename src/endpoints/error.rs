//! Why an endpoint definition was refused before anything was sent, and why a definition that
//! compiled did not render for one call. Each variant names the key at fault, so a file's line
//! can be found and a caller (or a test) can tell a typo from a bad value.

use crate::models::Operation;

/// An `[endpoints.NAME]` definition refused: the endpoint as written, and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("endpoints.{endpoint}: {problem}")]
pub(crate) struct EndpointError {
    pub endpoint: String,
    pub problem: EndpointProblem,
}

impl EndpointError {
    pub(super) fn new(op: Operation, problem: impl Into<EndpointProblem>) -> EndpointError {
        EndpointError {
            endpoint: op.as_str().to_string(),
            problem: problem.into(),
        }
    }

    /// The key at fault inside the table (`path`, a header's or a capture's name), if one is.
    pub(crate) fn key(&self) -> Option<&str> {
        self.problem.key()
    }

    /// Which `[[endpoints.NAME.parts]]` table (from 0) the key is in, when a part is at fault.
    pub(crate) fn part_index(&self) -> Option<usize> {
        match &self.problem {
            EndpointProblem::Part { index, .. } => Some(*index),
            _ => None,
        }
    }
}

/// What is wrong with one endpoint's definition.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EndpointProblem {
    #[error("unknown operation (known: {})", known_operations())]
    UnknownOperation,
    #[error("method: missing")]
    NoMethod,
    #[error("method: {reason}")]
    BadMethod { method: String, reason: String },
    #[error("path: missing")]
    NoPath,
    #[error("path: must start with /")]
    RelativePath { path: String },
    #[error("path template: {0}")]
    PathTemplate(minijinja::Error),
    #[error("body template: {0}")]
    BodyTemplate(minijinja::Error),
    /// A header ppcert sends itself (a second `Authorization` would put a token in the file).
    #[error("headers.{name}: ppcert sets {name} itself; it cannot be configured")]
    ReservedHeader { name: String },
    #[error("body and parts: an endpoint sends one body, a template or multipart parts")]
    BodyAndParts,
    /// A `[[endpoints.NAME.parts]]` table refused: which one (from 1, as the file reads),
    /// the field at fault and why.
    #[error("parts[{}].{}: {error}", index + 1, error.field())]
    Part {
        index: usize,
        #[source]
        error: super::part_error::PartError,
    },
    #[error("headers.{name}: not a valid header name")]
    BadHeaderName { name: String },
    #[error("headers.{name}: template: {error}")]
    HeaderTemplate {
        name: String,
        error: minijinja::Error,
    },
    #[error("expect: an empty list would fail every call; leave it out for any 2xx")]
    EmptyExpect,
    #[error("expect: {status} is not an HTTP status (100 to 599)")]
    NotAStatus { status: u16 },
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Wait(#[from] super::WaitError),
    /// A wait's condition that names what its call never holds, or does not evaluate with a
    /// sample booking.
    #[error("wait.until: {0}")]
    WaitCondition(super::ConditionError),
    /// A wait repeats its request: on a write that would send the write again.
    #[error(
        "wait: {op} is a write, and a wait sends its request again until a condition holds: \
         ppcert never sends a write twice. To read until its outcome shows, use \
         [endpoints.{op}.confirm] (read, until, every, timeout; docs/flows.md)"
    )]
    WaitOnWrite { op: Operation },
    #[error(transparent)]
    Confirm(#[from] ConfirmError),
    /// A template that compiled but does not render with the sample context of its call.
    #[error("{key} does not render with a sample booking: {error}")]
    Unrendered { key: String, error: RenderError },
    /// A template names an attribute its call's context never holds (a typo, usually);
    /// `there` says what the mapping it was looked up in holds.
    #[error(
        "{key}: `{attribute}`: no such {}; {there} (docs/config.md: \"Template context\")",
        if attribute.contains('.') { "attribute" } else { "variable" }
    )]
    UnknownAttribute {
        key: String,
        attribute: String,
        op: Operation,
        /// Boxed: every config error carries this enum, and most never this variant.
        there: Box<str>,
    },
}

impl EndpointProblem {
    fn key(&self) -> Option<&str> {
        match self {
            EndpointProblem::UnknownOperation => None,
            EndpointProblem::NoMethod | EndpointProblem::BadMethod { .. } => Some("method"),
            EndpointProblem::NoPath
            | EndpointProblem::RelativePath { .. }
            | EndpointProblem::PathTemplate(_) => Some("path"),
            EndpointProblem::BodyTemplate(_) | EndpointProblem::BodyAndParts => Some("body"),
            EndpointProblem::Part { error, .. } => Some(error.field()),
            EndpointProblem::ReservedHeader { name }
            | EndpointProblem::BadHeaderName { name }
            | EndpointProblem::HeaderTemplate { name, .. } => Some(name),
            EndpointProblem::EmptyExpect | EndpointProblem::NotAStatus { .. } => Some("expect"),
            EndpointProblem::Capture(capture) => Some(capture.name()),
            EndpointProblem::Wait(wait) => Some(wait.key),
            EndpointProblem::WaitCondition(_) => Some("until"),
            EndpointProblem::WaitOnWrite { .. } => Some("wait"),
            EndpointProblem::Confirm(confirm) => Some(&confirm.key),
            EndpointProblem::Unrendered { key, .. }
            | EndpointProblem::UnknownAttribute { key, .. } => Some(key),
        }
    }
}

fn known_operations() -> String {
    let known: Vec<&str> = Operation::ALL.iter().map(|o| o.as_str()).collect();
    known.join(", ")
}

/// A `[endpoints.NAME.capture]` value refused: the capture's name and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CaptureError {
    #[error(
        "capture.{name}: not a name a capture of {op} can have: a name of your own is \
         letters, digits and `_` (read later as `captured.{name}`), and a built-in value of \
         another answer cannot be read from this one (built-in here: {})",
        known_captures(known)
    )]
    Unknown {
        name: String,
        op: Operation,
        known: &'static [&'static str],
    },
    #[error("capture.{name}: `{header}` is not a header name")]
    NotAHeader { name: String, header: String },
    #[error("capture.{name}: pattern is not a regex: {error}")]
    NotARegex { name: String, error: regex::Error },
    #[error("capture.{name}: template: {error}")]
    Template {
        name: String,
        error: minijinja::Error,
    },
    /// The template renders (with a sample product type) to something no JSONPath parses.
    #[error("capture.{name}: `{rendered}` is not a JSONPath: {error}")]
    NotAJsonPath {
        name: String,
        rendered: String,
        error: serde_json_path::ParseError,
    },
}

impl CaptureError {
    /// The capture's name, as the table spells it.
    pub(crate) fn name(&self) -> &str {
        match self {
            CaptureError::Unknown { name, .. }
            | CaptureError::NotAHeader { name, .. }
            | CaptureError::NotARegex { name, .. }
            | CaptureError::Template { name, .. }
            | CaptureError::NotAJsonPath { name, .. } => name,
        }
    }
}

fn known_captures(known: &[&str]) -> String {
    if known.is_empty() {
        "none: nothing is read from this answer".to_string()
    } else {
        known.join(", ")
    }
}

/// A compiled template that did not render for one call (a value the context lacks, a body
/// that is not JSON). Never holds a rendered header's value: it may be a credential.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RenderError {
    /// The operation's template is not in its environment (compiled definitions always are).
    #[error("{0}")]
    NoTemplate(minijinja::Error),
    #[error("endpoints.{op}.path: {error:#}")]
    Path {
        op: Operation,
        error: minijinja::Error,
    },
    #[error("endpoints.{op}.headers.{name}: {error:#}")]
    Header {
        op: Operation,
        name: String,
        error: minijinja::Error,
    },
    #[error("endpoints.{op}.headers.{name} rendered to a value no header can hold")]
    HeaderValue { op: Operation, name: String },
    #[error("endpoints.{op}.body: {error:#}")]
    Body {
        op: Operation,
        error: minijinja::Error,
    },
    #[error("endpoints.{op}.body did not render to JSON: {error}")]
    BodyNotJson {
        op: Operation,
        error: serde_json::Error,
    },
    /// A confirmation's `read` template.
    #[error("endpoints.{op}.confirm.read: {error:#}")]
    ConfirmRead {
        op: Operation,
        error: minijinja::Error,
    },
    /// `key` is `endpoints.OP.capture.NAME`.
    #[error("{key}: {error:#}")]
    Capture {
        key: String,
        error: minijinja::Error,
    },
    #[error("{key} rendered to `{path}`, not a JSONPath: {error}")]
    CaptureNotJsonPath {
        key: String,
        path: String,
        error: serde_json_path::ParseError,
    },
}

impl RenderError {
    /// The expression a render refused as undefined (`flight.airline_iata`), read from the
    /// template's source where the error points: a strict `tojson` cannot know the name, and
    /// a plain lookup's error names only its last step.
    pub(crate) fn undefined_attribute(&self) -> Option<String> {
        let error = match self {
            RenderError::Path { error, .. }
            | RenderError::Header { error, .. }
            | RenderError::Body { error, .. }
            | RenderError::ConfirmRead { error, .. }
            | RenderError::Capture { error, .. } => error,
            _ => return None,
        };
        if error.kind() != minijinja::ErrorKind::UndefinedError {
            return None;
        }
        let source = error.template_source()?;
        let range = error.range()?;
        let before = source.get(..range.start)?;
        let open = before.rfind("{{").or_else(|| before.rfind("{%"))? + 2;
        // Piped to a filter, the error points at the filter; else at the lookup that failed,
        // whose expression runs from the tag's start to the error's end.
        let expression = match before[open..].rsplit_once('|') {
            Some((expression, _)) => expression,
            None => source.get(open..range.end)?,
        };
        let mut name = expression.split_whitespace().next_back()?;
        // `flights[0]` failed on `flights`: the index is not the name.
        while let Some((head, _)) = name.strip_suffix(']').and_then(|n| n.rsplit_once('[')) {
            name = head;
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']');
        (!name.is_empty() && name.chars().all(plain)).then(|| name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::dialect::{sample, spec_with};
    use crate::endpoints::EndpointOverride;

    fn refused(op: &str, table: EndpointOverride) -> EndpointError {
        let overrides = BTreeMap::from([(op.to_string(), table)]);
        match spec_with(&overrides).and_then(|e| e.rehearse(sample)) {
            Ok(()) => panic!("{op}: accepted"),
            Err(error) => error,
        }
    }

    #[test]
    fn a_refused_definition_names_the_endpoint_and_the_key() {
        let headers = |name: &str, value: &str| EndpointOverride {
            headers: BTreeMap::from([(name.to_string(), value.to_string())]),
            ..Default::default()
        };
        let reserved = refused("quote", headers("Authorization", "Bearer x"));
        assert_eq!(
            (reserved.endpoint.as_str(), reserved.key()),
            ("quote", Some("Authorization"))
        );
        assert!(matches!(
            reserved.problem,
            EndpointProblem::ReservedHeader { .. }
        ));
        // A typo is named with what its mapping holds, not in minijinja's words.
        let typo = refused("claim", headers("X-Ref", "{{ contract.idd }}"));
        assert_eq!(typo.key(), Some("X-Ref"));
        assert_eq!(
            typo.to_string(),
            "endpoints.claim: X-Ref: `contract.idd`: no such attribute; contract has id \
             (docs/config.md: \"Template context\")"
        );
        let variable = refused("claim", headers("X-Ref", "{{ contrat.id }}"));
        assert!(
            variable.to_string().contains(
                "`contrat.id`: no such attribute; the context of claim has beneficiary, booking, captured"
            ),
            "{variable}"
        );
        // Only a rehearsal of every name finds a typo in a branch the sample does not take.
        let branch = "{% if false %}{{ contract.idd }}{% endif %}";
        let unused = refused("claim", headers("X-Ref", branch));
        assert!(matches!(
            &unused.problem,
            EndpointProblem::UnknownAttribute { attribute, op: Operation::Claim, .. } if attribute == "contract.idd"
        ));
        assert_eq!(unused.key(), Some("X-Ref"));
        let relative = refused(
            "quote",
            EndpointOverride {
                path: Some("quotes".into()),
                ..Default::default()
            },
        );
        assert!(
            matches!(&relative.problem, EndpointProblem::RelativePath { path } if path == "quotes")
        );
        assert_eq!(
            relative.to_string(),
            "endpoints.quote: path: must start with /"
        );
        let unknown = refused("quotes", EndpointOverride::default());
        assert!(matches!(unknown.problem, EndpointProblem::UnknownOperation));
        assert_eq!(unknown.key(), None);
    }

    #[test]
    fn a_typo_deep_in_the_request_is_named_plain_indexed_or_piped() {
        for (body, name) in [
            ("{{ request.data.x }}", "request.data.x"),
            (
                "{\"v\": {{ request.data.flights[0].airlineIata | tojson }}}",
                "request.data.flights",
            ),
            (
                "{\"v\": {{ request.data.currencyy | tojson }}}",
                "request.data.currencyy",
            ),
        ] {
            let table = EndpointOverride {
                body: Some(body.into()),
                ..Default::default()
            };
            let typo = refused("quote", table);
            assert!(
                matches!(&typo.problem, EndpointProblem::UnknownAttribute { attribute, .. } if attribute == name),
                "{body}: {typo}"
            );
            assert!(
                typo.to_string()
                    .contains("request.data has currency, trips"),
                "{typo}"
            );
        }
    }

    #[test]
    fn a_body_that_does_not_render_to_json_is_told_apart_from_a_template_error() {
        let overrides = BTreeMap::from([(
            "quote".to_string(),
            EndpointOverride {
                body: Some("{{ data }}".into()),
                ..Default::default()
            },
        )]);
        let endpoints = spec_with(&overrides).unwrap();
        let not_json = endpoints.body(Operation::Quote, &json!({"data": "x y"}), None);
        assert!(matches!(
            not_json,
            Err(RenderError::BodyNotJson {
                op: Operation::Quote,
                ..
            })
        ));
        let undefined = endpoints.body(Operation::Quote, &json!({}), None);
        assert!(matches!(
            undefined,
            Err(RenderError::Body {
                op: Operation::Quote,
                ..
            })
        ));
    }
}

/// What is wrong with a `[endpoints.WRITE.confirm]` table: the key and why. Here, not in
/// `confirm.rs`, because that file reads captures, whose errors are this file's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("confirm.{key}: {reason}")]
pub(crate) struct ConfirmError {
    pub key: String,
    pub reason: String,
}

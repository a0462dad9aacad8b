//! `[[endpoints.NAME.parts]]`: a `multipart/form-data` body (RFC 7578), its parts in order,
//! each from a body template, a file (read once, bounded) or a generated document; checked when
//! the endpoints compile, rendered per call into a [`Multipart`].

use std::path::PathBuf;
use std::sync::Arc;

use minijinja::{Environment, Value as Context};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{EndpointProblem, RenderError};
use super::letter::{DOCUMENTS, withdrawal_letter};
use super::part_error::PartError;
use super::payload::{Multipart, Part, PartContent, is_json};
use crate::models::Operation;

/// The largest file a part may carry: a document a claim attaches, not a data set.
pub(crate) const MAX_PART_FILE_BYTES: u64 = 5 * 1024 * 1024;

/// One `[[endpoints.NAME.parts]]` table as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PartSpec {
    /// The part's name in its `Content-Disposition`.
    pub name: Option<String>,
    /// Default: `application/json` for a body, `application/pdf` for a document,
    /// `application/octet-stream` for a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The file name the part announces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// A template: JSON when the part's type is, else sent as rendered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A file's path, relative to the config file's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// A document ppcert generates: `withdrawal-letter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
}

/// Where a compiled part's content comes from.
#[derive(Debug, Clone)]
enum Source {
    /// The body template's key in the bodies environment.
    Template(String),
    File(Arc<[u8]>),
    Letter,
}

/// One part, compiled.
#[derive(Debug, Clone)]
pub(super) struct CompiledPart {
    name: String,
    content_type: String,
    filename: Option<String>,
    source: Source,
}

/// The key of a part's body template: `claim/parts/0`.
pub(super) fn part_key(op: Operation, index: usize) -> String {
    format!("{op}/parts/{index}")
}

/// Checks and compiles the parts of `op`, adding body templates to `bodies`.
pub(super) fn compile(
    op: Operation,
    specs: &[PartSpec],
    bodies: &mut Environment<'static>,
) -> Result<Vec<CompiledPart>, EndpointProblem> {
    let mut out = Vec::new();
    for (index, spec) in specs.iter().enumerate() {
        let fail = |error: PartError| EndpointProblem::Part { index, error };
        let name = (spec.name.clone())
            .filter(|n| !n.trim().is_empty())
            .ok_or_else(|| fail(PartError::NoName))?;
        let (source, default_type) = source(op, index, spec, bodies).map_err(fail)?;
        let content_type = (spec.content_type.clone()).unwrap_or_else(|| default_type.into());
        if reqwest::header::HeaderValue::from_str(&content_type).is_err() {
            return Err(fail(PartError::NotAMediaType { content_type }));
        }
        out.push(CompiledPart {
            name,
            content_type,
            filename: spec.filename.clone(),
            source,
        });
    }
    Ok(out)
}

/// A part's one source of content, and the media type it has unless told another.
fn source(
    op: Operation,
    index: usize,
    spec: &PartSpec,
    bodies: &mut Environment<'static>,
) -> Result<(Source, &'static str), PartError> {
    let given = [
        ("body", spec.body.is_some()),
        ("file", spec.file.is_some()),
        ("document", spec.document.is_some()),
    ];
    let named: Vec<&str> = given.iter().filter(|(_, s)| *s).map(|(f, _)| *f).collect();
    match named.len() {
        0 => return Err(PartError::NoSource),
        1 => {}
        _ => return Err(PartError::SeveralSources { given: named }),
    }
    if let Some(body) = &spec.body {
        let key = part_key(op, index);
        (bodies.add_template_owned(key.clone(), body.clone())).map_err(PartError::Template)?;
        return Ok((Source::Template(key), "application/json"));
    }
    if let Some(path) = &spec.file {
        let bytes = read_bounded(path)?;
        return Ok((Source::File(bytes), "application/octet-stream"));
    }
    let document = spec.document.as_deref().unwrap_or_default();
    if !DOCUMENTS.contains(&document) {
        return Err(PartError::UnknownDocument {
            document: document.to_string(),
            known: &DOCUMENTS,
        });
    }
    Ok((Source::Letter, "application/pdf"))
}

/// A file's bytes, refused when it cannot be read or is larger than a part may carry.
fn read_bounded(path: &std::path::Path) -> Result<Arc<[u8]>, PartError> {
    let unreadable = |error| PartError::Unreadable {
        path: path.to_path_buf(),
        error,
    };
    let size = std::fs::metadata(path).map_err(unreadable)?.len();
    if size > MAX_PART_FILE_BYTES {
        return Err(PartError::TooLarge {
            path: path.to_path_buf(),
            size,
            max: MAX_PART_FILE_BYTES,
        });
    }
    std::fs::read(path).map(Arc::from).map_err(unreadable)
}

/// The parts rendered for one call.
pub(super) fn render(
    op: Operation,
    parts: &[CompiledPart],
    bodies: &Environment<'static>,
    context: &Value,
) -> Result<Multipart, RenderError> {
    let mut out = Vec::new();
    for part in parts {
        let content = match &part.source {
            Source::Template(key) => {
                let text = bodies
                    .get_template(key)
                    .and_then(|t| t.render(Context::from(minijinja::value::Serde(context))))
                    .map_err(|error| RenderError::Body { op, error })?;
                if is_json(&part.content_type) {
                    let value = serde_json::from_str(&text)
                        .map_err(|error| RenderError::BodyNotJson { op, error })?;
                    PartContent::Json(value)
                } else {
                    PartContent::Text(text)
                }
            }
            Source::File(bytes) => PartContent::Bytes(bytes.clone()),
            Source::Letter => PartContent::Bytes(withdrawal_letter(context).into()),
        };
        out.push(Part {
            name: part.name.clone(),
            content_type: part.content_type.clone(),
            filename: part.filename.clone(),
            content,
        });
    }
    Ok(Multipart::new(out))
}

/// The body templates of `parts`, by key: what the rehearsal and the `captured` reads see.
pub(super) fn template_keys(parts: &[CompiledPart]) -> Vec<String> {
    parts
        .iter()
        .filter_map(|p| match &p.source {
            Source::Template(key) => Some(key.clone()),
            _ => None,
        })
        .collect()
}

//! Dialects: named sets of `[endpoints.*]` definitions (method, path, body, capture) that say how
//! a staging spells its calls. `spec` is complete and always the base; another dialect, then
//! the user's `[endpoints.*]` tables, override it entry by entry. Built-in dialects are files
//! under `dialects/` compiled into the binary; a path names a dialect file of the user's.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::Deserialize;

pub(crate) use crate::endpoints::EndpointOverride;
use crate::endpoints::Endpoints;
use crate::scenario::{self, FileError};

pub(crate) type Definitions = BTreeMap<String, EndpointOverride>;

/// A dialect built into the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Spec,
    ProviderDocs,
}

impl Builtin {
    pub(crate) const ALL: [Builtin; 2] = [Builtin::Spec, Builtin::ProviderDocs];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Builtin::Spec => "spec",
            Builtin::ProviderDocs => "provider-docs",
        }
    }

    /// Its file under `dialects/`, compiled in.
    fn text(self) -> &'static str {
        match self {
            Builtin::Spec => include_str!("../dialects/spec.toml"),
            Builtin::ProviderDocs => include_str!("../dialects/provider-docs.toml"),
        }
    }

    pub(crate) fn named(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The request shapes the embedded sandbox enforces for this dialect.
    pub(crate) fn enforced(self) -> crate::sandbox::ApiDialect {
        match self {
            Builtin::Spec => crate::sandbox::ApiDialect::Spec,
            Builtin::ProviderDocs => crate::sandbox::ApiDialect::ProviderDocs,
        }
    }
}

/// The dialects built into the binary, by name: [`Builtin`]'s, for callers outside the crate.
pub const BUILTIN: [(&str, &str); 2] = [
    ("spec", include_str!("../dialects/spec.toml")),
    (
        "provider-docs",
        include_str!("../dialects/provider-docs.toml"),
    ),
];

pub(crate) const DEFAULT: &str = "spec";

/// The request shapes the embedded sandbox enforces for a dialect: a built-in one's own
/// (a `match` in [`Builtin::enforced`]), the spec's for a dialect file of the user's.
pub(crate) fn enforced(dialect: &Dialect) -> crate::sandbox::ApiDialect {
    dialect
        .builtin
        .map_or(crate::sandbox::ApiDialect::Spec, Builtin::enforced)
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Dialect {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub endpoints: Definitions,
    /// Which built-in dialect this is; `None` for a dialect file of the user's.
    #[serde(skip)]
    pub builtin: Option<Builtin>,
}

static SPEC: LazyLock<Dialect> = LazyLock::new(|| {
    let mut spec: Dialect =
        toml::from_str(Builtin::Spec.text()).expect("dialects/spec.toml is a valid dialect");
    spec.builtin = Some(Builtin::Spec);
    spec
});

/// The complete base every dialect and config overrides.
pub(crate) fn spec() -> &'static Dialect {
    &SPEC
}

/// `over` on top of `base`: per endpoint, each field `over` sets wins; captures merge by name.
pub(crate) fn merge(base: &Definitions, over: &Definitions) -> Definitions {
    let mut merged = base.clone();
    for (name, table) in over {
        let entry = merged.entry(name.clone()).or_default();
        if table.method.is_some() {
            entry.method = table.method.clone();
        }
        if table.path.is_some() {
            entry.path = table.path.clone();
        }
        if table.body.is_some() {
            entry.body = table.body.clone();
        }
        // Parts replace whatever body the layers below sent, and a body over parts them.
        if !table.parts.is_empty() {
            entry.parts = table.parts.clone();
            if table.body.is_none() {
                entry.body = None;
            }
        } else if table.body.is_some() {
            entry.parts.clear();
        }
        if table.expect.is_some() {
            entry.expect = table.expect.clone();
        }
        if table.wait.is_some() {
            entry.wait = table.wait.clone();
        }
        if table.confirm.is_some() {
            entry.confirm = table.confirm.clone();
        }
        entry
            .headers
            .extend(table.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        entry
            .capture
            .extend(table.capture.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    merged
}

/// Parses a dialect file; its endpoints are checked as a config's are (names, templates,
/// captures), naming the line.
pub(crate) fn parse(file: &str, text: &str) -> Result<Dialect, FileError> {
    let dialect: Dialect =
        toml::from_str(text).map_err(|e| scenario::toml_error(file, text, &e))?;
    check_endpoints(file, text, &merge(&spec().endpoints, &dialect.endpoints))?;
    Ok(dialect)
}

/// A built-in dialect by name, or a dialect file by path (anything with a `/` or `.toml`).
pub(crate) fn resolve(name_or_path: &str) -> Result<Dialect, FileError> {
    if let Some(builtin) = Builtin::named(name_or_path) {
        // Not checked again at every start (a millisecond of it): a built-in dialect is part
        // of the binary, and `every_built_in_dialect_parses_and_compiles` checks each one. The
        // endpoints a run uses, the user's tables over it, are checked by the config.
        let mut dialect: Dialect = match builtin {
            Builtin::Spec => spec().clone(),
            _ => toml::from_str(builtin.text()).map_err(|e| {
                let file = format!("<built-in dialect {name_or_path}>");
                scenario::toml_error(&file, builtin.text(), &e)
            })?,
        };
        dialect.builtin = Some(builtin);
        return Ok(dialect);
    }
    let looks_like_path = name_or_path.contains('/') || name_or_path.ends_with(".toml");
    if !looks_like_path {
        let known: Vec<&str> = Builtin::ALL.map(Builtin::name).to_vec();
        return Err(FileError {
            file: name_or_path.to_string(),
            line: None,
            message: format!(
                "no dialect of that name (built in: {}; or give a path to a dialect file)",
                known.join(", ")
            ),
        });
    }
    let path = std::path::Path::new(name_or_path);
    let bounded = crate::bounds::read_text_capped(path, crate::bounds::TEXT_FILE_BYTES);
    let text = bounded.map_err(|e| FileError {
        file: name_or_path.to_string(),
        line: None,
        message: format!("cannot read: {e}"),
    })?;
    parse(name_or_path, &text)
}

/// Compiles endpoint definitions; an error names the file, the line and the key.
pub(crate) fn check_endpoints(
    file: &str,
    text: &str,
    definitions: &Definitions,
) -> Result<Endpoints, FileError> {
    Endpoints::compile(definitions)
        .and_then(|endpoints| endpoints.rehearse(sample).map(|()| endpoints))
        .map_err(|e| FileError {
            file: file.into(),
            line: endpoint_line(text, &e.endpoint, e.key(), e.part_index()),
            message: e.to_string(),
        })
}

/// The line of `key` inside `[endpoints.NAME…]` tables (inside the `part`-th
/// `[[endpoints.NAME.parts]]` table, counted from 0, when a part is at fault), else the
/// table's first line.
fn endpoint_line(
    text: &str,
    endpoint: &str,
    key: Option<&str>,
    part: Option<usize>,
) -> Option<usize> {
    let header = format!("[endpoints.{endpoint}");
    let parts = format!("[[endpoints.{endpoint}.parts]]");
    let start = match part {
        Some(n) => (text.lines().enumerate())
            .filter(|(_, l)| l.trim_start().starts_with(&parts))
            .nth(n)
            .map(|(i, _)| i),
        None => None,
    };
    let start = start.or_else(|| {
        text.lines().position(|l| {
            let l = l.trim_start();
            l.starts_with(&header) || l.strip_prefix('[').is_some_and(|l| l.starts_with(&header))
        })
    })?;
    let found = key.and_then(|key| {
        text.lines().enumerate().skip(start).find_map(|(i, line)| {
            let line = line.trim_start();
            let rest = line.strip_prefix(key)?;
            rest.trim_start().starts_with('=').then_some(i)
        })
    });
    Some(found.unwrap_or(start) + 1)
}

/// The spec dialect with `overrides` on top, compiled (what the tests of dialects compare).
#[cfg(test)]
pub(crate) fn spec_with(
    overrides: &Definitions,
) -> Result<Endpoints, crate::endpoints::EndpointError> {
    Endpoints::compile(&merge(&spec().endpoints, overrides))
}

/// The context and default body each operation gets (see [`crate::endpoints::context::sample`]).
pub(crate) fn sample(
    op: crate::models::Operation,
) -> (serde_json::Value, Option<serde_json::Value>) {
    crate::endpoints::context::sample(op)
}

/// The full definitions a run uses: spec, then the dialect, then the user's tables.
pub(crate) fn definitions(dialect: &Dialect, user: &Definitions) -> Definitions {
    merge(&merge(&spec().endpoints, &dialect.endpoints), user)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A retried write is "the same one" to a staging only when a header really reads the key:
    /// a comment that names it sends nothing.
    #[test]
    fn only_a_header_that_reads_the_idempotency_key_sends_it() {
        let sends = |value: &str| {
            let table = crate::endpoints::EndpointOverride {
                headers: BTreeMap::from([("X-Note".to_string(), value.to_string())]),
                ..Default::default()
            };
            let overrides = BTreeMap::from([("subscription".to_string(), table)]);
            let endpoints = spec_with(&overrides).unwrap();
            endpoints.sends_idempotency_key(crate::models::Operation::Subscription)
        };
        assert!(sends("{{ idempotency_key }}"));
        assert!(!sends("{# idempotency_key #}fixed"));
        assert!(!sends("{{ quote.reference }}-idempotency_key"));
    }

    #[test]
    fn every_built_in_dialect_parses_and_compiles() {
        for (builtin, (name, text)) in Builtin::ALL.into_iter().zip(BUILTIN) {
            assert_eq!((builtin.name(), builtin.text()), (name, text));
            let dialect = resolve(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(dialect.name, name);
            assert_eq!(dialect.builtin, Some(builtin));
            let merged = merge(&spec().endpoints, &dialect.endpoints);
            check_endpoints(name, text, &merged).unwrap_or_else(|e| panic!("{e}"));
            crate::endpoints::Endpoints::compile(&definitions(&dialect, &Definitions::new()))
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        }
    }

    #[test]
    fn user_tables_override_field_by_field() {
        let dialect = resolve("provider-docs").unwrap();
        let mut user = Definitions::new();
        user.insert(
            "flight_cancellation".into(),
            EndpointOverride {
                path: Some("/mine".into()),
                ..Default::default()
            },
        );
        let merged = definitions(&dialect, &user);
        let flight = &merged["flight_cancellation"];
        assert_eq!(flight.path.as_deref(), Some("/mine"));
        assert!(
            flight.body.as_deref().unwrap().contains("Canceled"),
            "the dialect's body stays"
        );
        assert_eq!(
            merged["quote"].path.as_deref(),
            Some("/quotes"),
            "spec is the base"
        );
    }

    #[test]
    fn an_unknown_name_lists_the_built_in_dialects() {
        let error = resolve("provider-doc").unwrap_err();
        assert!(error.message.contains("spec, provider-docs"), "{error}");
    }
}

#[cfg(test)]
mod endpoint_tests {
    use crate::dialect::spec_with;
    use crate::endpoints::*;
    use crate::models::Operation;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[test]
    fn path_values_are_percent_encoded_and_undefined_is_an_error() {
        let endpoints = spec_with(&BTreeMap::new()).unwrap();
        let path = endpoints
            .path(Operation::Claim, &json!({"contract": {"id": "a/b c"}}))
            .unwrap();
        assert_eq!(path, "/contracts/a%2Fb%20c/claims");
        for (id, expected) in [
            ("..", "/contracts/%2E%2E/claims"),
            (".", "/contracts/%2E/claims"),
        ] {
            let path = endpoints
                .path(Operation::Claim, &json!({"contract": {"id": id}}))
                .unwrap();
            assert_eq!(path, expected, "a server's id stays one path segment");
        }
        assert!(endpoints.path(Operation::Claim, &json!({})).is_err());
    }

    #[test]
    fn overrides_are_checked_by_name_and_syntax() {
        let mut overrides = BTreeMap::new();
        overrides.insert("quote_removal".to_string(), EndpointOverride::default());
        assert_eq!(spec_with(&overrides).unwrap_err().endpoint, "quote_removal");
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "quote_deletion".to_string(),
            EndpointOverride {
                path: Some("/q/{{ quote.id ".into()),
                ..Default::default()
            },
        );
        assert!(spec_with(&overrides).is_err());
    }
}

#[cfg(test)]
mod capture_tests {
    use crate::dialect::spec_with;
    use crate::endpoints::*;
    use crate::models::Operation;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn with_capture(op: &str, name: &str, path: &str) -> Result<Endpoints, EndpointError> {
        let mut overrides = BTreeMap::new();
        overrides.insert(
            op.to_string(),
            EndpointOverride {
                capture: [(name.to_string(), path.into())].into(),
                ..Default::default()
            },
        );
        spec_with(&overrides)
    }

    #[test]
    fn a_capture_renders_then_reads_the_first_match() {
        let endpoints = with_capture(
            "read_contracts",
            "contract_id",
            "$.{{ product_type }}[*].contract.id",
        )
        .unwrap();
        let body = json!({"WITHDRAWAL": [{"contract": {"id": 41}}, {"contract": {"id": 42}}]});
        let read = endpoints
            .capture(
                Operation::ReadContracts,
                "contract_id",
                &json!({"product_type": "WITHDRAWAL"}),
                AnswerView {
                    body: &body,
                    headers: &BTreeMap::new(),
                },
            )
            .unwrap()
            .unwrap();
        assert_eq!(read.path, "$.WITHDRAWAL[*].contract.id");
        assert_eq!(read.value, Some(json!(41)));
        assert!(
            endpoints
                .capture(
                    Operation::ReadContracts,
                    "claim_status",
                    &json!({}),
                    AnswerView {
                        body: &body,
                        headers: &BTreeMap::new()
                    }
                )
                .is_none(),
            "no capture configured: the built-in reading applies"
        );
    }

    #[test]
    fn unknown_names_and_bad_jsonpath_are_refused_naming_the_key() {
        // A name of the user's own is a value of its own (`captured.idd`); a built-in value
        // of another answer, or a name no template could spell, is refused.
        assert!(with_capture("quote", "idd", "$.id").is_ok());
        let error = with_capture("quote", "contract_id", "$.id").unwrap_err();
        assert!(matches!(
            &error.problem,
            EndpointProblem::Capture(CaptureError::Unknown { name, op: Operation::Quote, .. }) if name == "contract_id"
        ));
        assert!(
            error.to_string().contains("capture.contract_id"),
            "{error:?}"
        );
        assert!(error.to_string().contains("id, reference, price_delta"));
        assert_eq!(error.key(), Some("contract_id"));
        let error = with_capture("quote", "my-etag", "$.id").unwrap_err();
        assert_eq!(error.key(), Some("my-etag"));
        let error = with_capture("quote", "id", "$.quote[").unwrap_err();
        assert!(matches!(
            &error.problem,
            EndpointProblem::Capture(CaptureError::NotAJsonPath { rendered, .. }) if rendered == "$.quote["
        ));
        assert!(error.to_string().contains("not a JSONPath"), "{error:?}");
        assert!(with_capture("claim", "claim_status", "$.claim.status").is_ok());
    }
}

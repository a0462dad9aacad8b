//! Headers for every API call: `[target.headers]`, then `--header "NAME: VALUE"` over it, each
//! added to every endpoint that does not set the header itself. Their values are templates;
//! `{{ env.NAME }}` reads the environment, and every variable a template reads is checked set
//! now (exit 2 naming it, before anything is sent) and returned as a secret to scrub; so is
//! the value of a header whose name says it is a credential, whatever gave it.

use std::collections::BTreeMap;

use regex::Regex;

use crate::dialect::Definitions;
use crate::endpoints::check_header_name;
use crate::secret::Secret;

/// Why a header for every call was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HeaderError {
    #[error("--header `{given}`: expected NAME: VALUE")]
    Malformed { given: String },
    /// `key` is `target.headers.NAME` or `--header NAME`, so the problem is said without
    /// its own `headers.NAME: ` (said once, in the user's spelling).
    #[error("{key}: {}", without_key(problem))]
    Refused {
        key: String,
        problem: crate::endpoints::EndpointProblem,
    },
    #[error(
        "{key} reads the environment variable {name}, which is not set (or blank): set it, or remove the header"
    )]
    MissingEnv { key: String, name: String },
}

/// An endpoint problem's words after its `headers.NAME: ` key.
fn without_key(problem: &crate::endpoints::EndpointProblem) -> String {
    let words = problem.to_string();
    match words.split_once(": ") {
        Some((key, rest)) if key.starts_with("headers.") => rest.to_string(),
        _ => words,
    }
}

/// `[target.headers]` with `--header` over it (names compared as HTTP does, ignoring case),
/// each name checked as an endpoint header's is.
pub(crate) fn common(
    file: &BTreeMap<String, String>,
    flags: &[String],
) -> Result<Vec<(String, String)>, HeaderError> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    let mut put = |key: String, name: &str, value: &str| {
        out.retain(|(_, n, _)| !n.eq_ignore_ascii_case(name));
        out.push((key, name.to_string(), value.to_string()));
    };
    for (name, value) in file {
        put(format!("target.headers.{name}"), name, value);
    }
    for given in flags {
        let (name, value) = given
            .split_once(':')
            .map(|(n, v)| (n.trim(), v.trim()))
            .filter(|(n, _)| !n.is_empty())
            .ok_or_else(|| HeaderError::Malformed {
                given: given.clone(),
            })?;
        put(format!("--header {name}"), name, value);
    }
    for (key, name, _) in &out {
        check_header_name(name).map_err(|problem| HeaderError::Refused {
            key: key.clone(),
            problem,
        })?;
    }
    Ok(out
        .into_iter()
        .map(|(_, name, value)| (name, value))
        .collect())
}

/// The headers with every `env.NAME` they read standing for a value, for checking a file
/// where the environment is not the run's (`validate`).
pub(crate) fn without_env(common: Vec<(String, String)>) -> Vec<(String, String)> {
    common
        .into_iter()
        .map(|(name, value)| match value.contains("env") {
            true => {
                let standing = env_reads().replace_all(&value, "\"set-at-run\"");
                (name, standing.into_owned())
            }
            false => (name, value),
        })
        .collect()
}

/// Every endpoint's templates (path, body, headers) with each `env.NAME` standing for a value:
/// `validate`, and the file's check before `run`, do not need the environment, which `run`
/// checks itself ([`env_secrets`]), naming the variable and the key.
pub(crate) fn definitions_without_env(definitions: &mut Definitions) {
    // The pattern is compiled only for a text that names `env` (as `env_reads_in` does): its
    // compilation was a tenth of the start of every run or `validate` given a `ppcert.toml`.
    let stand = |text: &mut String| {
        if text.contains("env") && env_reads().is_match(text) {
            *text = env_reads().replace_all(text, "\"set-at-run\"").into_owned();
        }
    };
    for endpoint in definitions.values_mut() {
        endpoint.path.iter_mut().for_each(stand);
        endpoint.body.iter_mut().for_each(stand);
        endpoint.headers.values_mut().for_each(stand);
    }
}

/// Every variable `[target.headers]` and `--header` read is set: checked before they join
/// the endpoints, so that a missing one is named by the key the user wrote.
pub(crate) fn common_env_set(
    file: &BTreeMap<String, String>,
    flags: &[String],
) -> Result<(), HeaderError> {
    let from_file = file
        .iter()
        .map(|(n, v)| (format!("target.headers.{n}"), v.as_str()));
    let from_flags = flags.iter().filter_map(|given| {
        let (name, value) = given.split_once(':')?;
        Some((format!("--header {}", name.trim()), value))
    });
    for (key, template) in from_file.chain(from_flags) {
        for found in env_reads_in(template) {
            let Some(name) = found.get(1).or_else(|| found.get(2)) else {
                continue;
            };
            if crate::env::named(name.as_str()).is_none() {
                let name = name.as_str().to_string();
                return Err(HeaderError::MissingEnv { key, name });
            }
        }
    }
    Ok(())
}

/// Every endpoint gains the common headers it does not set itself (its own win).
pub(crate) fn merge(definitions: &mut Definitions, common: &[(String, String)]) {
    for endpoint in definitions.values_mut() {
        for (name, value) in common {
            let own = endpoint
                .headers
                .keys()
                .any(|n| n.eq_ignore_ascii_case(name));
            if !own {
                endpoint.headers.insert(name.clone(), value.clone());
            }
        }
    }
}

/// What a template reads of the environment: `env.NAME` or `env["NAME"]`.
/// Compiled once, and only when a template names `env` at all (most runs' never do): it was
/// a tenth of a default batch's start, compiled afresh for each use.
fn env_reads() -> &'static Regex {
    static READS: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r#"\benv\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([^"']+)["']\s*\])"#)
            .expect("static pattern")
    });
    &READS
}

/// The `env.NAME` or `env["NAME"]` reads in `template`.
fn env_reads_in(template: &str) -> impl Iterator<Item = regex::Captures<'_>> {
    let reads = template.contains("env").then(env_reads);
    reads
        .into_iter()
        .flat_map(|reads| reads.captures_iter(template))
}

/// The environment variables the endpoints' templates read (`env.NAME`, `env["NAME"]`), each
/// checked set; their values come back as secrets to scrub from everything recorded.
pub(crate) fn env_secrets(definitions: &Definitions) -> Result<Vec<Secret>, HeaderError> {
    let mut secrets = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (op, endpoint) in definitions {
        let templates = endpoint
            .headers
            .iter()
            .map(|(name, value)| (format!("endpoints.{op}.headers.{name}"), value))
            .chain(
                endpoint
                    .path
                    .iter()
                    .map(|p| (format!("endpoints.{op}.path"), p)),
            )
            .chain(
                endpoint
                    .body
                    .iter()
                    .map(|b| (format!("endpoints.{op}.body"), b)),
            );
        for (key, template) in templates {
            for found in env_reads_in(template) {
                let Some(name) = found.get(1).or_else(|| found.get(2)) else {
                    continue;
                };
                let name = name.as_str().to_string();
                if !seen.insert(name.clone()) {
                    continue;
                }
                match crate::env::named(&name) {
                    Some(value) => secrets.push(Secret::new(value)),
                    None => return Err(HeaderError::MissingEnv { key, name }),
                }
            }
        }
    }
    Ok(secrets)
}

/// The values of headers whose name says they carry a credential
/// ([`names_a_credential`](crate::secret::names_a_credential)) and that are written as they are
/// sent (a literal in `ppcert.toml` or `--header`): scrubbed like the token. A value a
/// template computes from the environment is scrubbed by [`env_secrets`].
pub(crate) fn named_secrets(definitions: &Definitions) -> Vec<Secret> {
    let mut seen = std::collections::BTreeSet::new();
    (definitions.values())
        .flat_map(|endpoint| endpoint.headers.iter())
        .filter(|(name, value)| {
            crate::secret::names_a_credential(name)
                && !value.contains("{{")
                && !value.contains("{%")
        })
        .filter(|(_, value)| seen.insert(value.trim().to_string()))
        .map(|(_, value)| Secret::new(value.trim()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_file_and_reserved_names_are_refused_by_key() {
        let file = BTreeMap::from([("X-Api-Version".to_string(), "1".to_string())]);
        let headers = common(&file, &["x-api-version: 2".into(), "X-Other:a:b".into()]).unwrap();
        assert_eq!(
            headers,
            vec![
                ("x-api-version".to_string(), "2".to_string()),
                ("X-Other".to_string(), "a:b".to_string())
            ]
        );
        let refused = common(&BTreeMap::new(), &["Authorization: x".into()]).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "--header Authorization: ppcert sets Authorization itself; it cannot be configured"
        );
        assert!(common(&BTreeMap::new(), &["nocolon".into()]).is_err());
    }
}

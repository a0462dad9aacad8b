//! `ppcert.toml`: its sections, read and checked with the same bounds as the flags, each
//! error naming the file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::file_errors::FileErrors;
use crate::bounds::{self, OutOfBounds};
use crate::dialect::{self, EndpointOverride};
use crate::environment::Environment;
use crate::scenario::{self, FileError};

pub const DEFAULT_CONFIG: &str = "ppcert.toml";

/// `ppcert.toml`: the staging, the partner, the run's limits and the staging's own spelling of
/// its calls. Flags and environment variables override it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// The staging: where it is, how it is reached, how it spells its calls.
    #[serde(default)]
    pub(crate) target: TargetSection,
    /// Who is certified.
    #[serde(default)]
    pub(crate) partner: PartnerSection,
    /// How the run sends its calls.
    #[serde(default)]
    pub(crate) run: RunSection,
    /// One table per operation (`quote`, `subscription`, `update`, `read_contracts`, `claim`,
    /// `quote_deletion`, `flight_cancellation`) overriding the dialect's definition field by field.
    #[serde(default)]
    pub(crate) endpoints: BTreeMap<String, EndpointOverride>,
    /// Where the token comes from, when it is not a static one.
    #[serde(default)]
    pub(crate) auth: AuthSection,
    /// What data this staging accepts.
    #[serde(default)]
    pub(crate) data: DataSection,
}

/// A file with mistakes is read a section at a time, so each is reported.
impl super::lenient::Sections for FileConfig {
    fn section(
        &mut self,
        name: &str,
        value: &toml::Spanned<toml::de::DeValue<'_>>,
        at: super::lenient::At<'_>,
    ) -> bool {
        use super::lenient::{endpoints, lenient};
        match name {
            "target" => self.target = lenient(value, at),
            "partner" => self.partner = lenient(value, at),
            "run" => self.run = lenient(value, at),
            "auth" => self.auth = lenient(value, at),
            "data" => self.data = lenient(value, at),
            "endpoints" => self.endpoints = endpoints(value, at),
            _ => return false,
        }
        true
    }
}

/// `[data]` in `ppcert.toml`: the shape of data the staging accepts (over the scenario's).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DataSection {
    /// Every generated booking number matches this regex.
    pub booking_number_pattern: Option<String>,
}

/// `[target]` in `ppcert.toml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetSection {
    /// The staging API root, `https://` (plain `http://` only on loopback); may carry a path
    /// prefix. Left out: the embedded sandbox.
    pub base_url: Option<String>,
    /// `staging`, or `production` (which arms the production guard).
    pub environment: Option<Environment>,
    /// `spec` (default), `provider-docs`, or a path to a dialect file.
    pub dialect: Option<String>,
    /// Extra root certificate (PEM) to trust, as `--cacert`.
    pub cacert: Option<PathBuf>,
    /// Client certificate chain (PEM) for mTLS, as `--cert`; needs `client_key`.
    pub client_cert: Option<PathBuf>,
    /// The private key (PEM) of `client_cert`, as `--key`.
    pub client_key: Option<PathBuf>,
    /// A PKCS#12 archive holding the client certificate and key (instead of the PEM pair).
    pub client_pkcs12: Option<PathBuf>,
    /// The environment variable holding the archive's password (never the password itself).
    pub client_pkcs12_password_env: Option<String>,
    /// Headers sent on every API call; each value is a template (`{{ env.NAME }}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

impl TargetSection {
    /// Relative paths are the file's: resolved against the directory holding it.
    fn resolve_paths(&mut self, dir: &Path) {
        for path in [
            &mut self.cacert,
            &mut self.client_cert,
            &mut self.client_key,
            &mut self.client_pkcs12,
        ]
        .into_iter()
        .flatten()
        {
            if path.is_relative() {
                *path = dir.join(&*path);
            }
        }
    }
}

/// `[partner]` in `ppcert.toml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PartnerSection {
    /// The partner's name, as the evidence and the reports show it.
    pub name: Option<String>,
    /// The partner sells flights: flight-cancellation reports are required of it.
    pub flight_seller: Option<bool>,
    /// The bundle this partner sells: which entry of a multi-bundle quote answer flows read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
}

/// `[run]` in `ppcert.toml`: the same bounds as the flags.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunSection {
    /// Flows run at once, as `--concurrency`.
    pub concurrency: Option<u32>,
    /// Seconds a call may take, as `--timeout`.
    pub timeout_secs: Option<u64>,
    /// Attempts after the first, for retryable failures only, as `--retries`.
    pub retries: Option<u32>,
}

/// How the client authenticates at the token endpoint.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ClientAuth {
    /// HTTP Basic (RFC 6749 §2.3.1's recommendation).
    #[default]
    Basic,
    /// `client_id` and `client_secret` as form fields.
    Post,
}

/// `[auth]` in `ppcert.toml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuthSection {
    /// The OAuth 2.0 token endpoint (client credentials grant).
    pub token_url: Option<String>,
    /// The client id sent to `token_url`.
    pub client_id: Option<String>,
    /// The environment variable holding the client secret (never the secret itself).
    pub client_secret_env: Option<String>,
    /// A file holding the client secret (instead of `client_secret_env`).
    pub client_secret_file: Option<PathBuf>,
    /// The `scope` asked of the token endpoint.
    pub scope: Option<String>,
    /// The `audience` asked of the token endpoint.
    pub audience: Option<String>,
    /// How the client authenticates at `token_url`: `basic` (default) or `post`.
    pub client_auth: Option<ClientAuth>,
    /// A command printing a token, or JSON `{"access_token", "expires_in"}`.
    pub command: Option<String>,
    /// How long the token command or endpoint may take [default: 30 s].
    pub timeout_secs: Option<u64>,
}

/// Reads a config file; a missing default file is no error, a missing named one is.
pub fn load_file(explicit: Option<&Path>) -> Result<FileConfig, FileErrors> {
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None if Path::new(DEFAULT_CONFIG).is_file() => PathBuf::from(DEFAULT_CONFIG),
        None => return Ok(FileConfig::default()),
    };
    let (shown, text) = scenario::read_text(&path)?;
    let mut config = parse_file(&shown, &text)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    config.target.resolve_paths(dir);
    Ok(config)
}

/// A part's `file` is the config file's: resolved against its directory before anything
/// reads it.
fn resolve_part_files(config: &mut FileConfig, dir: &Path) {
    let parts = config
        .endpoints
        .values_mut()
        .flat_map(|e| e.parts.iter_mut());
    for path in parts.filter_map(|p| p.file.as_mut()) {
        if path.is_relative() {
            *path = dir.join(&*path);
        }
    }
}

pub fn parse_file(file: &str, text: &str) -> Result<FileConfig, FileErrors> {
    let mut errors = Vec::new();
    let config = match toml::from_str::<FileConfig>(text) {
        Ok(config) => config,
        Err(whole) => {
            // Not TOML: nothing after the syntax error can be read.
            let Ok((config, shape)) = super::lenient::read::<FileConfig>(text) else {
                return Err(scenario::toml_error(file, text, &whole).into());
            };
            if shape.len() > 1 {
                errors.extend(shape.iter().map(|(key, e)| keyed(file, text, key, e)));
            } else {
                errors.push(scenario::toml_error(file, text, &whole));
            }
            config
        }
    };
    let mut config = config;
    resolve_part_files(
        &mut config,
        Path::new(file).parent().unwrap_or(Path::new("")),
    );
    check_values(file, text, &config, &mut errors);
    // Reported with the others only: alone, the URL in force (a flag may override this one)
    // is checked where the target is chosen, in its own words.
    if let (false, Some(raw)) = (errors.is_empty(), &config.target.base_url)
        && let Err(e) = super::base_url::parse_base_url(raw)
    {
        errors.push(FileError {
            file: file.into(),
            line: line_with(text, "base_url"),
            message: format!("target.base_url: {e}"),
        });
    }
    errors.sort_by_key(|e| e.line.unwrap_or(usize::MAX));
    match errors.is_empty() {
        true => Ok(config),
        false => Err(FileErrors::new(errors)),
    }
}

/// A key's error among others, naming the key: `column 11: run.retries: invalid type: …`.
fn keyed(file: &str, text: &str, key: &str, error: &toml::de::Error) -> FileError {
    let mut error = scenario::toml_error(file, text, error);
    error.message = match error.message.split_once(": ") {
        Some((column, rest)) if column.starts_with("column ") => format!("{column}: {key}: {rest}"),
        _ => format!("{key}: {}", error.message),
    };
    error
}

/// The values a well-formed file may still get wrong: each error naming its line and key.
fn check_values(file: &str, text: &str, config: &FileConfig, errors: &mut Vec<FileError>) {
    let at = |needle: &str, message: String| FileError {
        file: file.into(),
        line: line_with(text, needle),
        message,
    };
    if config.target.environment == Some(Environment::Sandbox) {
        errors.push(at("environment", "target.environment: \"sandbox\" is implied by leaving base_url out; use \"staging\" or \"production\"".into()));
    }
    for (key, refused) in check_run_bounds(&config.run) {
        errors.push(at(key, refused.to_string()));
    }
    if let Some(pattern) = &config.data.booking_number_pattern
        && let Err(e) = crate::datagen::numbers::compile(pattern)
    {
        let message = format!("data.booking_number_pattern: {e}");
        errors.push(at("booking_number_pattern", message));
    }
    let chosen = config.target.dialect.as_deref().unwrap_or(dialect::DEFAULT);
    match dialect::resolve(chosen) {
        Err(e) => errors.push(at("dialect", format!("target.dialect: {e}"))),
        Ok(dialect) => {
            let mut definitions = dialect::definitions(&dialect, &config.endpoints);
            super::headers::definitions_without_env(&mut definitions);
            // `[target.headers]` joins every endpoint as `run` merges it, so `validate`
            // refuses what `run` would; but the environment it reads is `run`'s to check: a
            // validating CI step does not hold the gateway's key.
            match super::headers::common(&config.target.headers, &[]) {
                Ok(common) => {
                    let common = super::headers::without_env(common);
                    super::headers::merge(&mut definitions, &common);
                }
                Err(e) => {
                    let line_of = match &e {
                        super::headers::HeaderError::Refused { key, .. } => {
                            key.rsplit('.').next().unwrap_or(key).to_string()
                        }
                        _ => "[target.headers]".to_string(),
                    };
                    errors.push(at(&line_of, e.to_string()));
                }
            }
            errors.extend(dialect::check_endpoints(file, text, &definitions).err());
        }
    }
}

/// `[run]` values within the bounds the flags have; each key at fault and why.
fn check_run_bounds(run: &RunSection) -> Vec<(&'static str, OutOfBounds)> {
    let checks = [
        (
            "concurrency",
            run.concurrency.map(i64::from),
            &bounds::CONCURRENCY,
        ),
        ("retries", run.retries.map(i64::from), &bounds::RETRIES),
    ];
    let mut refused = Vec::new();
    for (key, value, range) in checks {
        if let Some(value) = value {
            let checked = bounds::check(&format!("run.{key}"), value, range);
            refused.extend(checked.err().map(|e| (key, e)));
        }
    }
    if let Some(timeout) = run.timeout_secs {
        let checked = bounds::check("run.timeout_secs", timeout, &bounds::TIMEOUT_SECS);
        refused.extend(checked.err().map(|e| ("timeout_secs", e)));
    }
    refused
}

fn line_with(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_values_get_the_flags_bounds_naming_file_line_and_key() {
        for (text, key, line) in [
            (
                "[run]\nconcurrency = 4\nretries = 1000\n",
                "run.retries = 1000",
                3,
            ),
            ("[run]\nconcurrency = 0\n", "run.concurrency = 0", 2),
            (
                "\n[run]\ntimeout_secs = 999999\n",
                "run.timeout_secs = 999999",
                3,
            ),
        ] {
            let errors = parse_file("ppcert.toml", text).unwrap_err();
            let error = errors.iter().next().unwrap();
            assert_eq!(error.line, Some(line), "{text}");
            assert!(error.message.starts_with(key), "{}", error.message);
        }
        assert!(parse_file("ppcert.toml", "[run]\nretries = 20\nconcurrency = 1024\n").is_ok());
    }
}

//! `ppcert.toml`: its sections, read and checked with the same bounds as the flags, each
//! error naming the file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bounds::{self, OutOfBounds};
use crate::dialect::{self, EndpointOverride};
use crate::environment::Environment;
use crate::scenario::{self, FileError};

pub const DEFAULT_CONFIG: &str = "ppcert.toml";

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub(crate) target: TargetSection,
    #[serde(default)]
    pub(crate) partner: PartnerSection,
    #[serde(default)]
    pub(crate) run: RunSection,
    #[serde(default)]
    pub(crate) endpoints: BTreeMap<String, EndpointOverride>,
    /// Where the token comes from, when it is not a static one.
    #[serde(default)]
    pub(crate) auth: AuthSection,
    /// What data this staging accepts.
    #[serde(default)]
    pub(crate) data: DataSection,
}

/// `[data]` in `ppcert.toml`: the shape of data the staging accepts (over the scenario's).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct DataSection {
    /// Every generated booking number matches this regex.
    pub booking_number_pattern: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetSection {
    pub base_url: Option<String>,
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

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct PartnerSection {
    pub name: Option<String>,
    pub flight_seller: Option<bool>,
    /// The bundle this partner sells: which entry of a multi-bundle quote answer flows read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunSection {
    pub concurrency: Option<u32>,
    pub timeout_secs: Option<u64>,
    pub retries: Option<u32>,
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ClientAuth {
    /// HTTP Basic (RFC 6749 §2.3.1's recommendation).
    #[default]
    Basic,
    /// `client_id` and `client_secret` as form fields.
    Post,
}

/// `[auth]` in `ppcert.toml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuthSection {
    pub token_url: Option<String>,
    pub client_id: Option<String>,
    /// The environment variable holding the client secret (never the secret itself).
    pub client_secret_env: Option<String>,
    pub client_secret_file: Option<PathBuf>,
    pub scope: Option<String>,
    pub audience: Option<String>,
    pub client_auth: Option<ClientAuth>,
    /// A command printing a token, or JSON `{"access_token", "expires_in"}`.
    pub command: Option<String>,
    /// How long the token command or endpoint may take [default: 30 s].
    pub timeout_secs: Option<u64>,
}

/// Reads a config file; a missing default file is no error, a missing named one is.
pub fn load_file(explicit: Option<&Path>) -> Result<FileConfig, FileError> {
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

pub fn parse_file(file: &str, text: &str) -> Result<FileConfig, FileError> {
    let config: FileConfig =
        toml::from_str(text).map_err(|e| scenario::toml_error(file, text, &e))?;
    if config.target.environment == Some(Environment::Sandbox) {
        return Err(FileError { file: file.into(), line: line_with(text, "environment"), message: "target.environment: \"sandbox\" is implied by leaving base_url out; use \"staging\" or \"production\"".into() });
    }
    check_run_bounds(&config.run).map_err(|(key, refused)| FileError {
        file: file.into(),
        line: line_with(text, key),
        message: refused.to_string(),
    })?;
    if let Some(pattern) = &config.data.booking_number_pattern {
        crate::datagen::numbers::compile(pattern).map_err(|e| FileError {
            file: file.into(),
            line: line_with(text, "booking_number_pattern"),
            message: format!("data.booking_number_pattern: {e}"),
        })?;
    }
    let chosen = config.target.dialect.as_deref().unwrap_or(dialect::DEFAULT);
    let dialect = dialect::resolve(chosen).map_err(|e| FileError {
        file: file.into(),
        line: line_with(text, "dialect"),
        message: format!("target.dialect: {e}"),
    })?;
    dialect::check_endpoints(
        file,
        text,
        &dialect::definitions(&dialect, &config.endpoints),
    )?;
    Ok(config)
}

/// `[run]` values within the bounds the flags have; the key at fault and why.
fn check_run_bounds(run: &RunSection) -> Result<(), (&'static str, OutOfBounds)> {
    let checks = [
        (
            "concurrency",
            run.concurrency.map(i64::from),
            &bounds::CONCURRENCY,
        ),
        ("retries", run.retries.map(i64::from), &bounds::RETRIES),
    ];
    for (key, value, range) in checks {
        if let Some(value) = value {
            bounds::check(&format!("run.{key}"), value, range).map_err(|e| (key, e))?;
        }
    }
    if let Some(timeout) = run.timeout_secs {
        bounds::check("run.timeout_secs", timeout, &bounds::TIMEOUT_SECS)
            .map_err(|e| ("timeout_secs", e))?;
    }
    Ok(())
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
            let error = parse_file("ppcert.toml", text).unwrap_err();
            assert_eq!(error.line, Some(line), "{text}");
            assert!(error.message.starts_with(key), "{}", error.message);
        }
        assert!(parse_file("ppcert.toml", "[run]\nretries = 20\nconcurrency = 1024\n").is_ok());
    }
}

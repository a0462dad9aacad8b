//! The staging as every command sees it: `run`, `probe`, `proxy` and `check-token` read
//! `ppcert.toml` once and resolve the dialect, the `[endpoints.*]` definitions (rehearsed
//! against the context each call gets), the request timeout and the TLS roots here, so they
//! agree on what the staging is (and `build.rs` builds their HTTP client from it).

use std::path::PathBuf;
use std::time::Duration;

use super::error::ConfigError;
use super::file::{FileConfig, load_file};
use super::{headers, tls};
use crate::cli::TargetArgs;
use crate::dialect::{self, Definitions, Dialect};
use crate::endpoints::Endpoints;

/// The dialect asked for: `--dialect`, else `[target] dialect`, else the spec.
pub(crate) fn dialect_choice(args: &TargetArgs, file: &FileConfig) -> String {
    args.dialect
        .clone()
        .or_else(|| file.target.dialect.clone())
        .unwrap_or_else(|| dialect::DEFAULT.to_string())
}

/// The per-request timeout: flag, else file, else 30 s.
pub(crate) fn request_timeout(args: &TargetArgs, file: &FileConfig) -> Duration {
    Duration::from_secs(args.timeout.or(file.run.timeout_secs).unwrap_or(30).max(1))
}

#[derive(Debug, Clone)]
pub(crate) struct Staging {
    /// The user's file as read (a missing default file reads as empty).
    pub file: FileConfig,
    /// The dialect in force, resolved (not its name).
    pub dialect: Dialect,
    /// Spec, then the dialect, then the user's tables.
    pub definitions: Definitions,
    pub endpoints: Endpoints,
    pub timeout: Duration,
    /// Extra root certificate (PEM) for the target's TLS.
    pub cacert: Option<PathBuf>,
    /// Client certificate and key for mutual TLS.
    pub identity: Option<super::tls::ClientIdentity>,
    /// Values the templates read from the environment (`env.NAME`), and those of headers named
    /// as credentials: scrubbed like the token.
    pub secrets: Vec<crate::secret::Secret>,
    /// `[target.headers]` with `--header` over it: what every endpoint of any dialect gets.
    pub common_headers: Vec<(String, String)>,
    /// The HTTP client, once built (`Staging::http`, in `build.rs`).
    pub(super) http: std::sync::OnceLock<reqwest::Client>,
}

impl Staging {
    /// Reads the config file named by `--config` (or `ppcert.toml`), then resolves it.
    pub(crate) fn load(args: &TargetArgs) -> Result<Staging, ConfigError> {
        let file = load_file(args.config.as_deref()).map_err(ConfigError::File)?;
        Staging::resolve(args, file)
    }

    /// The flags over `file`: dialect, endpoints with every template rehearsed, timeout.
    pub(crate) fn resolve(args: &TargetArgs, file: FileConfig) -> Result<Staging, ConfigError> {
        let dialect =
            dialect::resolve(&dialect_choice(args, &file)).map_err(ConfigError::Dialect)?;
        let mut definitions = dialect::definitions(&dialect, &file.endpoints);
        let common = headers::common(&file.target.headers, &args.headers)?;
        headers::common_env_set(&file.target.headers, &args.headers)?;
        headers::merge(&mut definitions, &common);
        // Before compiling: a variable not set is named, not reported as a template error.
        let mut secrets = headers::env_secrets(&definitions)?;
        secrets.extend(headers::named_secrets(&definitions));
        let endpoints = Endpoints::compile(&definitions)?;
        // A built-in dialect with nothing of the user's over it is rehearsed by a unit test
        // (`every_built_in_dialect_parses_and_compiles`), not again at every start: a
        // millisecond and a half of the default batch's start, for a check that cannot fail.
        let untouched = dialect.builtin.is_some() && file.endpoints.is_empty() && common.is_empty();
        if !untouched {
            endpoints.rehearse(dialect::sample)?;
        }
        let endpoints = endpoints.with_bundle(file.partner.bundle.clone());
        Ok(Staging {
            timeout: request_timeout(args, &file),
            cacert: tls::cacert(args, &file)?,
            identity: tls::client_identity(args, &file)?,
            secrets,
            common_headers: common,
            http: std::sync::OnceLock::new(),
            file,
            dialect,
            definitions,
            endpoints,
        })
    }

    /// The dialect's name, as its file says.
    pub(crate) fn dialect_name(&self) -> &str {
        &self.dialect.name
    }
}

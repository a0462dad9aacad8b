//! What can be wrong with a command's configuration (flags, environment, `ppcert.toml`, the
//! record of an interrupted run), found before anything is sent: each variant names the key
//! and, where it is no secret, the value.

use std::num::NonZeroU32;
use std::path::PathBuf;

pub(crate) use super::base_url::BaseUrlError;
use crate::bounds::OutOfBounds;
use crate::endpoints::EndpointError;
use crate::environment::Environment;
use crate::scenario::FileError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    /// The config file is unreadable or malformed (each mistake's line named).
    #[error(transparent)]
    File(super::file_errors::FileErrors),
    /// The scenario to run is unknown, unreadable or malformed.
    #[error(transparent)]
    Scenario(FileError),
    #[error("dialect: {0}")]
    Dialect(FileError),
    /// `proxy --faults`: the plan is unreadable or malformed (file, line and field named).
    #[error("--faults: {0}")]
    Faults(FileError),
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// A template reads a `captured.NAME` its flow captures only later, or never.
    #[error("{file}: scenario `{scenario}`: {error}")]
    CapturedTooEarly {
        file: String,
        scenario: String,
        error: Box<crate::endpoints::CapturedTooEarly>,
    },
    #[error(transparent)]
    OutOfBounds(#[from] OutOfBounds),
    #[error(transparent)]
    BaseUrl(#[from] BaseUrlError),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// The CA, client certificate or key is unreadable or not what it should be.
    #[error(transparent)]
    Tls(#[from] super::tls::TlsError),
    /// A header for every call is refused (its name, or a variable it reads is not set).
    #[error(transparent)]
    Header(#[from] super::headers::HeaderError),
    /// A CI job whose base URL went missing would otherwise pass against the embedded sandbox.
    #[error(
        "a token is set (PPCERT_TOKEN or --token-file) but no target: pass --base-url URL (or PPCERT_BASE_URL, or [target] base_url) to reach staging, or unset the token to run against the embedded sandbox"
    )]
    TokenWithoutTarget,
    #[error(
        "a target needs a token: set PPCERT_TOKEN, pass --token-file PATH or --token-command CMD, or configure [auth] in ppcert.toml"
    )]
    TargetWithoutToken,
    #[error(
        "--webhooks has the embedded sandbox deliver webhooks; against a staging, pass --webhook-listen ADDR where it delivers them"
    )]
    WebhooksWithoutListen,
}

/// Where the token comes from, refused: `[auth]`, `--token-command`, or two sources at once.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AuthError {
    #[error("a command ends in a backslash")]
    TrailingBackslash,
    #[error("a quote in the command is not closed")]
    OpenQuote,
    #[error("the token command is empty")]
    EmptyCommand,
    #[error("auth: give client_secret_env or client_secret_file, not both")]
    TwoClientSecrets,
    #[error("auth: token_url needs client_secret_env (a variable's name) or client_secret_file")]
    NoClientSecret,
    #[error("auth.client_secret_env: ${name} is not set")]
    ClientSecretUnset { name: String },
    #[error("auth.token_url `{url}`: {error}")]
    TokenUrl { url: String, error: url::ParseError },
    #[error(
        "auth.token_url `{url}`: the client secret travels there: https:// only (http:// for loopback)"
    )]
    InsecureTokenUrl { url: String },
    /// Never quotes the URL: it holds a credential.
    #[error(
        "auth.token_url holds a credential ({key}): it would be written to evidence.json and journal.jsonl; give the secret with client_secret_env or client_secret_file"
    )]
    CredentialsInTokenUrl { key: String },
    #[error("auth: token_url needs client_id")]
    NoClientId,
    #[error("auth: a token command and token_url are two token sources; keep one")]
    CommandAndTokenUrl,
    #[error(
        "a token is set (PPCERT_TOKEN or --token-file) and [auth] or --token-command also gives one; keep one source"
    )]
    TwoSources,
}

/// A token or client secret that cannot be one: where it was read (`--token-file PATH`,
/// `PPCERT_TOKEN`), and why. Never holds the text read.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: {problem}")]
pub(crate) struct SecretError {
    pub origin: String,
    pub problem: SecretProblem,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum SecretProblem {
    #[error("cannot read: {0}")]
    Unreadable(std::io::Error),
    #[error("larger than {kib} KiB: this is not a {kind} file")]
    TooLarge { kib: u64, kind: &'static str },
    #[error("not UTF-8 text: this is not a {kind} file")]
    NotUtf8 { kind: &'static str },
    #[error("the token starts with a byte-order mark; save it as plain UTF-8 without BOM")]
    ByteOrderMark,
    #[error("the token holds a control character (U+{code:04X}); a bearer token is printable text")]
    ControlCharacter { code: u32 },
    #[error("expected one token on one line")]
    NotOneLine,
}

/// `--resume` refused: the invocation says otherwise than the interrupted run's record (`then`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ResumeError {
    #[error("--resume: the run ran scenario `{ran}`, not `{asked}`; leave --scenario out")]
    OtherScenario { ran: String, asked: String },
    #[error(
        "--resume: this bundle holds partner traffic recorded by ppcert proxy; there is no run to continue"
    )]
    ProxyTraffic,
    #[error(
        "--resume: scenario `{name}` changed since the run started (SHA-256 {then} then, {now} now)"
    )]
    ScenarioChanged {
        name: String,
        then: String,
        now: String,
    },
    #[error(
        "--resume: the run was against {then}, not {now}; resume it against its own target (leave out --base-url, PPCERT_BASE_URL and [target] base_url, or give that URL)"
    )]
    OtherTarget { then: String, now: url::Url },
    #[error("--resume: the run was against {}, not {}", then.as_str(), now.as_str())]
    OtherEnvironment { then: Environment, now: Environment },
    #[error(
        "--resume: the run needs its token again: set PPCERT_TOKEN, pass --token-file PATH or --token-command CMD, or configure [auth]"
    )]
    NoToken,
    #[error(
        "--resume: the run took its tokens from {then}, not {now}; resume it with the same source"
    )]
    OtherTokenSource { then: String, now: String },
    #[error("--resume: the run started at --scale {then}, not {now}")]
    OtherScale { then: NonZeroU32, now: u32 },
    #[error(
        "--resume: the run was for a partner that does {}sell flights; keep --no-flight-cancellations and [partner] flight_seller as they were",
        if *then { "" } else { "not " }
    )]
    OtherFlightSeller { then: bool },
    #[error(
        "--resume: the run spoke dialect `{then}`, not `{now}`; keep --dialect and [target] dialect as they were"
    )]
    OtherDialect { then: String, now: String },
    #[error("--resume: the run's seed is {then}, not {now}; leave --seed out")]
    OtherSeed { then: u64, now: u64 },
    // The interrupted run's record itself, read back from its journal.
    #[error("{}: the run line is unreadable: {error}", dir.display())]
    RunLineUnreadable {
        dir: PathBuf,
        #[source]
        error: serde_json::Error,
    },
    #[error("{}: the journal has no run line to resume", dir.display())]
    NoRunLine { dir: PathBuf },
    #[error(
        "--resume: {} holds partner traffic recorded by ppcert proxy, not a run ppcert can continue; start the proxy again for a new session",
        dir.display()
    )]
    ProxySession { dir: PathBuf },
    #[error(
        "--resume: that run used the embedded sandbox, whose state ended with it; start a new run instead"
    )]
    EmbeddedSandbox,
    /// `wrong` says what the line is instead.
    #[error("{}:{line}: not a line this run wrote: {wrong}; nothing was sent", path.display())]
    ForeignLine {
        path: PathBuf,
        line: usize,
        wrong: String,
    },
    #[error("{}: the run line records scale 0", dir.display())]
    ScaleZero { dir: PathBuf },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Failure;

    #[test]
    fn a_config_error_is_exit_2_in_its_own_words() {
        let failure = Failure::from(ConfigError::from(ResumeError::OtherSeed {
            then: 7,
            now: 8,
        }));
        assert_eq!(failure.exit_code(), crate::exit_codes::USAGE);
        assert_eq!(
            failure.to_string(),
            "--resume: the run's seed is 7, not 8; leave --seed out"
        );
        let flags = ResumeError::OtherFlightSeller { then: false };
        assert!(
            flags.to_string().contains("does not sell flights"),
            "{flags}"
        );
    }
}

//! What can be wrong with a command's configuration (flags, environment, `ppcert.toml`, the
//! record of an interrupted run), found before anything is sent: each variant names the key
//! and, where it is no secret, the value.

pub(crate) use super::base_url::BaseUrlError;
use crate::bounds::OutOfBounds;
use crate::endpoints::EndpointError;
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

/// `--resume` refused: defined beside the journal's reading (`evidence/resume.rs`), which
/// refuses with it too; the merge of a resumed invocation refuses with it here.
pub(crate) use crate::evidence::resume_error::ResumeError;

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

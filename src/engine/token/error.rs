//! Why a token source gave no token: the file, the command or the token endpoint, each named.
//! No variant holds a token or the client secret: the endpoint's words and a command's stderr
//! are scrubbed of both before they are kept.

use crate::config::SecretError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    /// The token file, read again after a rejection, is no longer one token.
    #[error(transparent)]
    File(#[from] SecretError),
    #[error("token command `{name}` could not be started: {error}")]
    CommandNotStarted { name: String, error: std::io::Error },
    #[error("token command `{name}` gave no token within {secs} s")]
    CommandTimedOut { name: String, secs: u64 },
    #[error("token command `{name}`: {error}")]
    CommandLost { name: String, error: std::io::Error },
    /// `exit` is `exit N` or `a signal`; `stderr` is the end of what it said, scrubbed.
    #[error("token command `{name}` failed ({exit}){}", said(stderr))]
    CommandFailed {
        name: String,
        exit: String,
        stderr: String,
    },
    #[error("token command `{name}` printed no token (a bare token, or JSON with access_token)")]
    CommandPrintedNoToken { name: String },
    #[error("auth: the client id or secret cannot be sent in a header")]
    UnsendableCredentials,
    /// `error` is the transport's words, scrubbed.
    #[error("token endpoint {url}: {error}")]
    EndpointUnreachable { url: String, error: String },
    /// `words` are RFC 6749 §5.2's `error` and `error_description`, never the rest.
    #[error("token endpoint {url} answered {status}: {words}")]
    EndpointRefused {
        url: String,
        status: u16,
        words: String,
        /// What a 429 or 503 announced (`Retry-After`), for the next attempt.
        retry_after: Option<std::time::Duration>,
    },
    #[error("token endpoint {url} answered more than {kib} KiB: not a token answer")]
    AnswerTooLarge { url: String, kib: u64 },
    /// A token an Authorization header cannot carry: refused rather than sent without one.
    #[error("{origin} gave a token that cannot be sent in an Authorization header: {why}")]
    Unsendable { origin: String, why: &'static str },
    #[error("token endpoint {url} answered {status} without an access_token")]
    NoAccessToken { url: String, status: u16 },
    /// After a rejection, the same token back is no renewal.
    #[error("{origin} gave the same token again")]
    SameTokenAgain { origin: String },
}

fn said(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

//! The one error type of a command: what to tell the user and the documented exit code it
//! ends with (docs/certify.md, the exit code table).

mod outcome;
mod refusal;
mod unverified;

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::attest::{BundleError, KeyError};
use crate::config::{ConfigError, ResumeError};
use crate::drift::LoadError;
use crate::endpoints::RenderError;
use crate::engine::token::TokenError;
use crate::evidence::resume::ReadBackError;
use crate::exit_codes;
use crate::journal::ReadError;
use crate::probe::{Broken, Stop};
use crate::proxy::command::CommandError;
use crate::scenario::FileError;
pub(crate) use outcome::{FirstCall, Outcome, RunOutcome};
pub(crate) use refusal::Refusal;
pub(crate) use unverified::Unverified;

/// A command's failure: what to tell the user, and, by its variant alone, the documented exit
/// code it ends with (as just's `Error::code` and nextest's `process_exit_code` choose theirs).
/// A variant whose failure has a cause wraps it (`#[from]` or `#[source]`), so `source()`
/// hands the cause itself to whoever walks the chain. Its words already say the cause, as the
/// layers' own errors do, so `commands::execute` prints the words alone and nothing twice.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    // Causes from the layers below, kept whole.
    /// Flags, environment, `ppcert.toml` or an interrupted run's record refused (2).
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A scenario or dialect file unknown, unreadable or malformed (2).
    #[error("{0}")]
    File(#[from] FileError),
    /// A request template that cannot be rendered before anything is sent (2).
    #[error("{0}")]
    Render(#[from] RenderError),
    /// A key cannot be made, read or used; asked for before anything is signed (2).
    #[error("{0}")]
    Key(#[from] KeyError),
    /// A bundle or package that cannot be read does not verify, like one found wrong (1).
    #[error("{0}")]
    Bundle(#[from] BundleError),
    /// `diff`: a bundle that cannot be compared (2: the comparison never happened, and 1
    /// must keep meaning "regressed").
    #[error("{0}")]
    Compare(#[from] LoadError),
    /// `--baseline`: a bundle that cannot be read or does not verify (2).
    #[error("--baseline {0}")]
    Baseline(#[source] LoadError),
    /// A journal that cannot be read back (2).
    #[error("{0}")]
    Journal(#[from] ReadError),
    /// `probe`: a definition it tried does not compile or render, so it cannot go on (1).
    #[error("the probe could not go on: {0}")]
    ProbeBroken(#[source] Broken),
    /// No token could be had from its source; nothing was sent to the API (3).
    #[error("no token: {0} (nothing was sent to the API)")]
    NoToken(#[source] TokenError),

    // Files and sockets, the path or address named.
    /// A file read or written before (or without) anything sent; `what` names it (2).
    #[error("{what}: {error}")]
    Io {
        what: String,
        #[source]
        error: std::io::Error,
    },
    /// A new run's journal that cannot be made, before anything is sent (2).
    #[error("{}: cannot write the journal: {error}", path.display())]
    JournalNotOpened {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// A bundle to export that cannot be opened; `name` as given (2).
    #[error("{name}: {error}")]
    Unexportable {
        name: String,
        #[source]
        error: BundleError,
    },
    /// A file a flag names that cannot be read (2).
    #[error("{flag} {}: cannot read: {error}", path.display())]
    Unreadable {
        flag: &'static str,
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// An address a flag names that cannot be listened on (2).
    #[error("{flag} {addr}: cannot listen: {error}")]
    Listen {
        flag: &'static str,
        addr: SocketAddr,
        #[source]
        error: std::io::Error,
    },
    /// A server (`serve`, `webhook listen`) that cannot listen on its address (2).
    #[error("cannot listen on {addr}: {error}")]
    ListenOn {
        addr: SocketAddr,
        #[source]
        error: std::io::Error,
    },
    /// The async runtime cannot start: nothing was done (2).
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The embedded sandbox cannot start (2).
    #[error("cannot start the embedded sandbox: {0}")]
    SandboxStart(#[source] std::io::Error),
    /// `serve`: the sandbox stopped with an error (2).
    #[error("sandbox stopped with an error: {0}")]
    SandboxStopped(#[source] std::io::Error),
    /// What was made cannot be encoded (JSON, JUnit, the man page); `what` says which (2).
    #[error("{what}: {error}")]
    Encode {
        what: &'static str,
        #[source]
        error: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A signature, package or dossier could not be written (6).
    #[error("{}: cannot write: {error}", path.display())]
    NotWritten {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// `probe --write-config`: the proven configuration not written, after the calls (6).
    #[error("--write-config {}: not written: {why}; the calls above were made", path.display())]
    ConfigNotWritten { path: PathBuf, why: String },
    /// `webhook send --junit`: the report not written, after the deliveries (6).
    #[error(
        "--junit {}: cannot write: {error}; the deliveries above were sent",
        path.display()
    )]
    JunitNotWritten {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// `run --sign-key`: the bundle was written but could not be signed as asked (6).
    #[error("{0}")]
    NotSigned(#[source] Box<Failure>),
    /// A failure that would say "nothing was sent" (2) once requests went out: what was asked
    /// could not be written (6). Only `AfterSending` makes it.
    #[error("{0}")]
    AfterSending(#[source] Box<Failure>),

    // What a command refused or found, in its own words.
    /// A command refused what it was given (an argument, a path, a bundle it will not take)
    /// before doing anything (2).
    #[error("{0}")]
    Refused(#[from] Refusal),
    /// A webhook secret missing, empty or not one for its scheme (2).
    #[error("{0}")]
    WebhookSecret(String),
    /// A booking-number pattern that cannot be drawn from; `key` names where it was set (2).
    #[error("{key}: {why}")]
    Pattern { key: &'static str, why: String },
    /// A dossier's record that cannot be read (2).
    #[error("{0}")]
    Dossier(String),
    /// `validate`: files with errors, each said above (2).
    #[error(
        "{failed} of {files} {} {} errors",
        if *files == 1 { "file" } else { "files" },
        if *failed == 1 { "has" } else { "have" }
    )]
    Invalid { failed: usize, files: usize },
    /// A bundle, dossier or record that does not verify, or is not the run's (1).
    #[error("{0}")]
    NotVerified(#[from] Unverified),
    /// The command could not come to a judgement (`check-token`, `probe`) (1).
    #[error("{0}")]
    Inconclusive(String),
    /// The token was rejected (3).
    #[error("{0}")]
    TokenRejected(String),
    /// The target could not be reached, or is not the API (4).
    #[error("{0}")]
    Unreachable(String),
    /// Refused by the production guard (5).
    #[error("{0}")]
    ProductionGuard(String),
    /// `proxy -- COMMAND`: COMMAND missing (2), not found (127) or not startable (126).
    #[error("{0}")]
    Command(#[from] CommandError),
}

impl Failure {
    /// The process exit code this failure ends the command with: the variant's alone.
    pub(crate) fn exit_code(&self) -> u8 {
        use Failure::*;
        match self {
            Bundle(_) | ProbeBroken(_) | NotVerified(_) | Inconclusive(_) => {
                exit_codes::REQUIREMENT_NOT_MET
            }
            Config(_)
            | File(_)
            | Render(_)
            | Key(_)
            | Compare(_)
            | Baseline(_)
            | Journal(_)
            | JournalNotOpened { .. }
            | Io { .. }
            | Unexportable { .. }
            | Unreadable { .. }
            | Listen { .. }
            | ListenOn { .. }
            | Runtime(_)
            | SandboxStart(_)
            | SandboxStopped(_)
            | Encode { .. }
            | Refused(_)
            | WebhookSecret(_)
            | Pattern { .. }
            | Dossier(_)
            | Invalid { .. } => exit_codes::USAGE,
            NoToken(_) | TokenRejected(_) => exit_codes::TOKEN_REJECTED,
            Unreachable(_) => exit_codes::UNREACHABLE,
            ProductionGuard(_) => exit_codes::PRODUCTION_GUARD,
            NotWritten { .. }
            | ConfigNotWritten { .. }
            | JunitNotWritten { .. }
            | NotSigned(_)
            | AfterSending(_) => exit_codes::BUNDLE_NOT_WRITTEN,
            Command(CommandError::Missing) => exit_codes::USAGE,
            Command(CommandError::NotStarted { .. }) => exit_codes::COMMAND_NOT_STARTED,
            Command(CommandError::NotFound { .. }) => exit_codes::COMMAND_NOT_FOUND,
        }
    }
}

/// How a probe stopped short: a rejected token (3), an unreachable target (4), or a
/// definition it cannot send (1).
impl From<Stop> for Failure {
    fn from(stop: Stop) -> Failure {
        match stop {
            Stop::TokenRejected(why) => Failure::TokenRejected(why),
            Stop::Unreachable(why) => Failure::Unreachable(why),
            Stop::Broken(broken) => Failure::ProbeBroken(broken),
        }
    }
}

/// `--resume` refusals come from the config layer's record checks: a config error (2).
impl From<ReadBackError> for Failure {
    fn from(error: ReadBackError) -> Failure {
        match error {
            ReadBackError::Journal(error) => Failure::Journal(error),
            ReadBackError::Resume(error) => error.into(),
        }
    }
}

impl From<ResumeError> for Failure {
    fn from(error: ResumeError) -> Failure {
        Failure::Config(error.into())
    }
}

/// A failure once requests have been sent: exit 2 promises nothing was, so it cannot be one.
/// Work that runs after sending returns this; a usage-shaped problem there (a path that turned
/// out unwritable) becomes "requests were sent but the output could not be written" (6).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(crate) struct AfterSending(Failure);

impl From<Failure> for AfterSending {
    fn from(failure: Failure) -> AfterSending {
        AfterSending(match failure.exit_code() {
            exit_codes::USAGE => Failure::AfterSending(Box::new(failure)),
            _ => failure,
        })
    }
}

impl From<AfterSending> for Failure {
    fn from(after: AfterSending) -> Failure {
        after.0
    }
}

/// How a command that judges something (`diff`, `probe`, `dossier`, `webhook send`, a run
/// against its baseline) came out when it ran to the end: the one mapping from its judgement
/// to the exit code, as `run_exit_code` is a run's and `Failure::exit_code` a failure's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judgement {
    /// Everything asked held (0).
    Met,
    /// Something asked did not hold: a requirement, a regression, what is left (1).
    NotMet,
    /// Nothing answered at all (4).
    NothingAnswered,
}

impl Judgement {
    /// `Met` when `met`, else `NotMet`.
    pub(crate) fn of(met: bool) -> Judgement {
        match met {
            true => Judgement::Met,
            false => Judgement::NotMet,
        }
    }

    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Judgement::Met => exit_codes::SUCCESS,
            Judgement::NotMet => exit_codes::REQUIREMENT_NOT_MET,
            Judgement::NothingAnswered => exit_codes::UNREACHABLE,
        }
    }
}

// Beside this file, not under error/, for length: `.ci/module-graph` would read a child
// module's `use` of its parent as an import running up (test code may use anything).
#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;

//! Why an interrupted run cannot be resumed: what its journal holds refuses it, or the
//! invocation says otherwise than its record. Its own error (mapped to the command's in
//! `error.rs`), beside the journal's reading, so that neither that reading nor the config merge
//! that refuses with it imports the other's layer.

use std::num::NonZeroU32;
use std::path::PathBuf;

use crate::environment::Environment;

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

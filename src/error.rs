//! The one error type of a command: what to tell the user and the documented exit code it
//! ends with (docs/certify.md, the exit code table).

use crate::exit_codes;

/// A command's failure: what to tell the user, and, by its variant, the documented exit code
/// it ends with (as just's `Error::code` and nextest's `process_exit_code` choose theirs).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    /// The command finished and something was not met, or a bundle does not verify (1).
    #[error("{0}")]
    NotMet(String),
    /// Usage, config or scenario error: nothing was sent (2).
    #[error("{0}")]
    Usage(String),
    /// The token was rejected, or no token could be had from its source (3).
    #[error("{0}")]
    TokenRejected(String),
    /// The target could not be reached (4).
    #[error("{0}")]
    Unreachable(String),
    /// Refused by the production guard (5).
    #[error("{0}")]
    ProductionGuard(String),
    /// Requests were sent but what was asked could not be written (6).
    #[error("{0}")]
    NotWritten(String),
    /// `proxy -- COMMAND`: COMMAND was found but could not be started (126).
    #[error("{0}")]
    CommandNotStarted(String),
    /// `proxy -- COMMAND`: COMMAND was not found (127).
    #[error("{0}")]
    CommandNotFound(String),
}

impl Failure {
    /// The process exit code this failure ends the command with.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            Failure::NotMet(_) => exit_codes::REQUIREMENT_NOT_MET,
            Failure::Usage(_) => exit_codes::USAGE,
            Failure::TokenRejected(_) => exit_codes::TOKEN_REJECTED,
            Failure::Unreachable(_) => exit_codes::UNREACHABLE,
            Failure::ProductionGuard(_) => exit_codes::PRODUCTION_GUARD,
            Failure::NotWritten(_) => exit_codes::BUNDLE_NOT_WRITTEN,
            Failure::CommandNotStarted(_) => exit_codes::COMMAND_NOT_STARTED,
            Failure::CommandNotFound(_) => exit_codes::COMMAND_NOT_FOUND,
        }
    }

    /// A usage, config or scenario error (exit 2).
    pub(crate) fn usage(error: impl std::fmt::Display) -> Self {
        Failure::Usage(error.to_string())
    }

    pub(crate) fn not_met(error: impl std::fmt::Display) -> Self {
        Failure::NotMet(error.to_string())
    }

    pub(crate) fn token_rejected(error: impl std::fmt::Display) -> Self {
        Failure::TokenRejected(error.to_string())
    }

    pub(crate) fn unreachable(error: impl std::fmt::Display) -> Self {
        Failure::Unreachable(error.to_string())
    }

    pub(crate) fn production_guard(error: impl std::fmt::Display) -> Self {
        Failure::ProductionGuard(error.to_string())
    }

    pub(crate) fn not_written(error: impl std::fmt::Display) -> Self {
        Failure::NotWritten(error.to_string())
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
        AfterSending(match failure {
            Failure::Usage(message) => Failure::NotWritten(message),
            other => other,
        })
    }
}

impl From<AfterSending> for Failure {
    fn from(after: AfterSending) -> Failure {
        after.0
    }
}

/// How the first call of a run ended: it settles whether anything else is worth sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstCall {
    Answered,
    TokenRejected,
    Unreachable,
    /// The first call answered 404: the base URL is not the API root (exit 4, as
    /// `check-token` says of the same URL).
    NotTheApi,
}

/// Everything about a finished run that decides its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunOutcome {
    pub bundle_written: bool,
    pub interrupted: bool,
    pub first_call: FirstCall,
    pub passed: bool,
}

/// The one mapping from a run's outcome to the process exit code. A lost bundle outranks
/// everything (the evidence is the product); then Ctrl-C, then a first call that settled the
/// run, then the verdict.
pub(crate) fn run_exit_code(outcome: &RunOutcome) -> u8 {
    match outcome {
        RunOutcome {
            bundle_written: false,
            ..
        } => exit_codes::BUNDLE_NOT_WRITTEN,
        RunOutcome {
            interrupted: true, ..
        } => exit_codes::INTERRUPTED,
        RunOutcome {
            first_call: FirstCall::TokenRejected,
            ..
        } => exit_codes::TOKEN_REJECTED,
        RunOutcome {
            first_call: FirstCall::Unreachable | FirstCall::NotTheApi,
            ..
        } => exit_codes::UNREACHABLE,
        RunOutcome { passed: true, .. } => exit_codes::SUCCESS,
        RunOutcome { passed: false, .. } => exit_codes::REQUIREMENT_NOT_MET,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_sending_a_usage_error_is_exit_6_never_2() {
        let after: Failure = AfterSending::from(Failure::usage("--junit x: cannot write")).into();
        assert_eq!(after.exit_code(), exit_codes::BUNDLE_NOT_WRITTEN);
        let kept: Failure = AfterSending::from(Failure::token_rejected("401")).into();
        assert_eq!(kept.exit_code(), exit_codes::TOKEN_REJECTED);
        assert_eq!(Failure::usage("x").exit_code(), exit_codes::USAGE);
    }

    #[test]
    fn every_outcome_maps_to_its_documented_code() {
        use FirstCall::*;
        let cases = [
            // (bundle written, interrupted, first call, passed) → code
            ((true, false, Answered, true), 0),
            ((true, false, Answered, false), 1),
            ((true, false, TokenRejected, false), 3),
            ((true, false, Unreachable, false), 4),
            ((true, false, NotTheApi, false), 4),
            ((true, true, Answered, false), 130),
            ((true, true, TokenRejected, false), 130),
            ((false, false, Answered, true), 6),
            ((false, true, Answered, false), 6),
            ((false, false, TokenRejected, false), 6),
        ];
        for ((bundle_written, interrupted, first_call, passed), code) in cases {
            let outcome = RunOutcome {
                bundle_written,
                interrupted,
                first_call,
                passed,
            };
            assert_eq!(run_exit_code(&outcome), code, "{outcome:?}");
        }
    }
}

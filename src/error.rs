//! The one error type of a command: what to tell the user and the documented exit code it
//! ends with (README, "Exit codes").

use crate::exit_codes;

/// A command's failure: the exit code it maps to and what to tell the user.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    pub fn new(code: u8, error: impl std::fmt::Display) -> Self {
        Failure {
            code,
            error: anyhow::anyhow!("{error}"),
        }
    }

    /// The process exit code this failure ends the command with.
    pub fn exit_code(&self) -> u8 {
        self.code
    }

    /// A usage, config or scenario error (exit 2).
    pub fn usage(error: impl std::fmt::Display) -> Self {
        Failure {
            code: exit_codes::USAGE,
            error: anyhow::anyhow!("{error}"),
        }
    }
}

/// How the first call of a run ended: it settles whether anything else is worth sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstCall {
    Answered,
    TokenRejected,
    Unreachable,
}

/// Everything about a finished run that decides its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    pub bundle_written: bool,
    pub interrupted: bool,
    pub first_call: FirstCall,
    pub passed: bool,
}

/// The one mapping from a run's outcome to the process exit code. A lost bundle outranks
/// everything (the evidence is the product); then Ctrl-C, then a first call that settled the
/// run, then the verdict.
pub fn run_exit_code(outcome: &RunOutcome) -> u8 {
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
            first_call: FirstCall::Unreachable,
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
    fn every_outcome_maps_to_its_documented_code() {
        use FirstCall::*;
        let cases = [
            // (bundle written, interrupted, first call, passed) → code
            ((true, false, Answered, true), 0),
            ((true, false, Answered, false), 1),
            ((true, false, TokenRejected, false), 3),
            ((true, false, Unreachable, false), 4),
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

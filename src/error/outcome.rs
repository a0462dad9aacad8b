//! How a session (`run`, `proxy`) ended, as one value whose variant alone chooses the process
//! exit code, as nextest's `FinalRunStats` and just's `Error::code()` do: nothing downstream
//! overwrites a number.

use crate::exit_codes;

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

/// Everything about a finished session that decides its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunOutcome {
    pub bundle_written: bool,
    pub interrupted: bool,
    pub first_call: FirstCall,
    pub passed: bool,
    /// Regressed against `--baseline` and not accepted (`--accept-drift`).
    pub regressed: bool,
}

/// A session's one outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every requirement met, nothing regressed (0).
    Passed,
    /// A requirement not met or a step failed (1).
    NotPassed,
    /// Passed, but regressed against the baseline (1).
    Regressed,
    /// The token was rejected on the first call (3).
    TokenRejected,
    /// The target could not be reached, or is not the API root (4).
    Unreachable,
    /// The bundle could not be written or signed (6).
    BundleNotWritten,
    /// Ctrl-C or SIGTERM (130): the bundle is written, marked incomplete.
    Interrupted,
    /// `proxy -- COMMAND`: the partner's suite failed by itself, with this code (its own, or
    /// 128 + N for signal N), passed on.
    SuiteFailed(u8),
}

impl Outcome {
    /// A lost bundle outranks everything (the evidence is the product); then Ctrl-C, then a
    /// first call that settled the run, then the verdict, then the baseline.
    pub(crate) fn of(run: &RunOutcome) -> Outcome {
        match run {
            RunOutcome {
                bundle_written: false,
                ..
            } => Outcome::BundleNotWritten,
            RunOutcome {
                interrupted: true, ..
            } => Outcome::Interrupted,
            RunOutcome {
                first_call: FirstCall::TokenRejected,
                ..
            } => Outcome::TokenRejected,
            RunOutcome {
                first_call: FirstCall::Unreachable | FirstCall::NotTheApi,
                ..
            } => Outcome::Unreachable,
            RunOutcome { passed: false, .. } => Outcome::NotPassed,
            RunOutcome {
                regressed: true, ..
            } => Outcome::Regressed,
            RunOutcome { .. } => Outcome::Passed,
        }
    }

    /// With `--dossier`: a session that finished is judged by the dossier's verdict (what the
    /// dossier lacks, not what this one bundle holds); a regression stays one.
    pub(crate) fn with_dossier(self, dossier_passed: bool) -> Outcome {
        match self {
            Outcome::Passed | Outcome::NotPassed if dossier_passed => Outcome::Passed,
            Outcome::Passed | Outcome::NotPassed => Outcome::NotPassed,
            other => other,
        }
    }

    /// With `proxy -- COMMAND`: the suite's own failure comes first.
    pub(crate) fn with_suite(self, failed_with: Option<u8>) -> Outcome {
        failed_with.map_or(self, Outcome::SuiteFailed)
    }

    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Outcome::Passed => exit_codes::SUCCESS,
            Outcome::NotPassed | Outcome::Regressed => exit_codes::REQUIREMENT_NOT_MET,
            Outcome::TokenRejected => exit_codes::TOKEN_REJECTED,
            Outcome::Unreachable => exit_codes::UNREACHABLE,
            Outcome::BundleNotWritten => exit_codes::BUNDLE_NOT_WRITTEN,
            Outcome::Interrupted => exit_codes::INTERRUPTED,
            Outcome::SuiteFailed(code) => code,
        }
    }
}

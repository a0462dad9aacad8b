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

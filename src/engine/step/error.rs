//! Why a step failed, as a type: the record says it in words (its `Display`), and the engine
//! can tell a refused call from a value that was never read or an interrupted wait.

/// Why a step failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StepError {
    /// The call did not do what the step needs: a refusal, no answer, or a failed check.
    Call(String),
    /// A value the step needs was not read by an earlier step (or from this answer).
    Missing(String),
    /// The endpoint's path or body could not be rendered for this step.
    Template(String),
    /// The claim settled in another status than the one awaited, or did not reach it in time.
    ClaimStatus(String),
    /// Ctrl-C arrived while the step waited.
    Interrupted,
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepError::Call(why)
            | StepError::Missing(why)
            | StepError::Template(why)
            | StepError::ClaimStatus(why) => f.write_str(why),
            StepError::Interrupted => f.write_str("interrupted while waiting"),
        }
    }
}

/// A missing value, named.
pub(crate) fn missing(what: impl Into<String>) -> StepError {
    StepError::Missing(what.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_says_why_in_the_same_words() {
        assert_eq!(
            StepError::Call("POST /quotes answered HTTP 400: bad".into()).to_string(),
            "POST /quotes answered HTTP 400: bad"
        );
        assert_eq!(
            missing("no claim was made").to_string(),
            "no claim was made"
        );
        assert_eq!(
            StepError::Interrupted.to_string(),
            "interrupted while waiting"
        );
    }
}

//! Why a condition over a call's context (a wait's `until`, a confirmation's `until`) could
//! not be judged, as a type: the key it was written under and the expression, kept apart from
//! the words, so a caller can tell a name the context never holds from an evaluation that failed.

use crate::models::Operation;

/// A condition that could not be evaluated, or that names what its call's context never holds.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConditionError {
    /// `key` is where it was written: `wait.until`, or `endpoints.OP.confirm.until`.
    #[error("{key} `{expression}`: {error:#}")]
    Unevaluated {
        key: String,
        expression: String,
        #[source]
        error: minijinja::Error,
    },
    #[error("`{name}` is not in the template context of {op} (README: \"Template context\")")]
    NotInContext { name: String, op: Operation },
}

impl ConditionError {
    /// The same error, said to be written under `key`.
    pub(crate) fn under(self, key: String) -> ConditionError {
        match self {
            ConditionError::Unevaluated {
                expression, error, ..
            } => ConditionError::Unevaluated {
                key,
                expression,
                error,
            },
            other => other,
        }
    }
}

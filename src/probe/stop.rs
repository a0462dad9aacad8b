//! Why a probe stopped before its calls were done: the staging said so (a rejected token, no
//! answer), or the probe's own definitions could not be sent.

use crate::endpoints::{EndpointError, RenderError};

#[derive(Debug)]
pub(crate) enum Stop {
    TokenRejected(String),
    Unreachable(String),
    Broken(Broken),
}

/// The probe cannot send its next call: a definition it tried does not compile or render.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Broken {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Definitions(#[from] EndpointError),
    /// The call could not be built as a run builds it (a template, a captured value).
    #[error("{0}")]
    Step(String),
}

impl From<Broken> for Stop {
    fn from(broken: Broken) -> Stop {
        Stop::Broken(broken)
    }
}

impl From<EndpointError> for Stop {
    fn from(error: EndpointError) -> Stop {
        Stop::Broken(error.into())
    }
}

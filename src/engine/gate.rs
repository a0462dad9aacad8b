//! The gate: the first flow's first real call decides whether the others start. A 401 there
//! means the token is rejected (exit 3); no connection, or no answer in time, means the target
//! is unreachable (exit 4). It is one request: nothing else is sent until it settles.

use serde::Serialize;
use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GateState {
    Pending,
    Open,
    TokenRejected,
    Unreachable,
    /// The first call found no such endpoint (404): the base URL is not the API root.
    NotTheApi,
}

impl std::fmt::Display for GateState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GateState::Pending => "no answer yet",
            GateState::Open => "an answer",
            GateState::TokenRejected => "a rejected token (401)",
            GateState::Unreachable => "no answer from the target",
            GateState::NotTheApi => "a 404 (the base URL is not the API root)",
        })
    }
}

pub(crate) struct Gate {
    sender: watch::Sender<GateState>,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            sender: watch::Sender::new(GateState::Pending),
        }
    }
}

impl Gate {
    /// Settles the gate once; later calls change nothing.
    pub(crate) fn settle(&self, state: GateState) {
        self.sender.send_if_modified(|current| {
            if *current == GateState::Pending {
                *current = state;
                true
            } else {
                false
            }
        });
    }

    /// The token was rejected after the gate opened (renewed and rejected again, or no new
    /// one could be had): no further step starts.
    pub(crate) fn reject_token(&self) {
        self.sender.send_replace(GateState::TokenRejected);
    }

    pub(crate) fn state(&self) -> GateState {
        *self.sender.borrow()
    }

    /// Waits until settled; true when open.
    pub(crate) async fn wait_open(&self) -> bool {
        let mut receiver = self.sender.subscribe();
        let settled = receiver
            .wait_for(|s| *s != GateState::Pending)
            .await
            .map(|s| *s);
        settled.ok() == Some(GateState::Open)
    }
}

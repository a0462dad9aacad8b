//! Which kind of server a run talks to: the provider's staging, its production (which arms the
//! production guard and never gets `claimDate`), or ppcert's own sandbox.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Environment {
    Staging,
    Production,
    /// The embedded sandbox (never written in a config file by hand).
    Sandbox,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Staging => "staging",
            Environment::Production => "production",
            Environment::Sandbox => "sandbox",
        }
    }
}

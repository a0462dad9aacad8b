//! Which kind of server a run talks to: the provider's staging, its production (which arms the
//! production guard and never gets `claimDate`), or ppcert's own sandbox.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
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

/// Whether `url` names this machine (127.0.0.0/8, ::1, `localhost`): the one place plain
/// `http://` is accepted, for a target and for a token endpoint alike.
pub(crate) fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

//! A command's target opened: the embedded sandbox started on an ephemeral loopback port from
//! the options the config chose (`Staging::embedded_sandbox`), with its own token, or the
//! remote API with the partner's token. The one place a command's embedded sandbox starts.

use super::auth::TokenSource;
use super::target::Target;
use crate::sandbox::{Sandbox, SandboxOptions};
use crate::secret::Secret;

pub(crate) struct Opened<Token = TokenSource> {
    /// Kept alive for as long as the command talks to it.
    pub sandbox: Option<Sandbox>,
    /// The API root, without a trailing slash.
    pub base_url: String,
    pub token: Token,
}

/// What a command authenticates with: its own token, or nothing when its client brings one.
pub(crate) trait Credential: Clone {
    /// The embedded sandbox's token, as this command holds it.
    fn from_sandbox(token: Secret) -> Self;
}

impl Credential for TokenSource {
    fn from_sandbox(token: Secret) -> Self {
        TokenSource::from(token)
    }
}

impl Credential for () {
    fn from_sandbox(_: Secret) -> Self {}
}

impl<Token: Credential> Target<Token> {
    /// The target, the embedded sandbox started with `options`; its error is the sandbox's
    /// (it could not listen on loopback).
    pub(crate) async fn open(&self, options: SandboxOptions) -> std::io::Result<Opened<Token>> {
        match self {
            Target::Embedded => {
                let sandbox = Sandbox::start(options).await?;
                let (base_url, token) = (sandbox.base_url(), Secret::new(sandbox.token()));
                Ok(Opened {
                    sandbox: Some(sandbox),
                    base_url,
                    token: Token::from_sandbox(token),
                })
            }
            Target::Remote {
                base_url, token, ..
            } => Ok(Opened {
                sandbox: None,
                base_url: base_url.as_str().trim_end_matches('/').to_string(),
                token: token.clone(),
            }),
        }
    }
}

//! Opening a command's target: the embedded sandbox on an ephemeral loopback port (with its own
//! token), or the remote API with the partner's token.

use std::sync::Arc;

use crate::config::{RetryPolicy, Target, TokenSource};
use crate::engine::Tokens;
use crate::error::Failure;
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

/// The target as `options` say (from the config: `Staging::embedded_sandbox`), or the remote
/// API: the one place a command's embedded sandbox starts.
pub(crate) async fn open<Token: Credential>(
    target: &Target<Token>,
    options: SandboxOptions,
) -> Result<Opened<Token>, Failure> {
    match target {
        Target::Embedded => {
            let sandbox = Sandbox::start(options)
                .await
                .map_err(|e| Failure::usage(format!("cannot start the embedded sandbox: {e}")))?;
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

/// The tokens of an opened target: the first one fetched from its source now, so a source
/// that cannot give one stops the command before anything is sent (exit 3).
pub(crate) async fn tokens(
    staging: &crate::config::Staging,
    source: &TokenSource,
) -> Result<Arc<Tokens>, Failure> {
    let http = staging.http()?;
    let tokens = if let TokenSource::Static { token, file: None } = source {
        Tokens::fixed(token.clone(), http)
    } else {
        Tokens::start(source.clone(), http).await.map_err(|why| {
            Failure::token_rejected(format!("no token: {why} (nothing was sent to the API)"))
        })?
    };
    // What `env.NAME` templates read is scrubbed wherever a token would be.
    tokens.also_scrub(&staging.secrets);
    Ok(tokens)
}

/// The API client every command talks to a staging with: the staging's HTTP client (its
/// timeout and TLS), the tokens, and the retry policy the command's config resolved.
pub(crate) fn client(
    staging: &crate::config::Staging,
    base_url: &str,
    tokens: Arc<Tokens>,
    retry: RetryPolicy,
) -> Result<crate::engine::ApiClient, Failure> {
    Ok(crate::engine::ApiClient::new(
        base_url,
        tokens,
        staging.http()?,
        retry,
    ))
}

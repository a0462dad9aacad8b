//! A command's target, opened (`config/opened.rs`), and the engine's tokens and API client
//! assembled from what the config hands out (the config may not import the engine).

use std::sync::Arc;

pub(crate) use crate::config::Opened;
use crate::config::{Credential, RetryPolicy, Target, TokenSource};
use crate::engine::Tokens;
use crate::error::Failure;
use crate::sandbox::SandboxOptions;

/// The target opened as the config says (`Target::open`), a sandbox that cannot start said
/// before anything is sent.
pub(crate) async fn open<Token: Credential>(
    target: &Target<Token>,
    options: SandboxOptions,
) -> Result<Opened<Token>, Failure> {
    target.open(options).await.map_err(Failure::SandboxStart)
}

/// The tokens of an opened target: the first one fetched from its source now, so a source
/// that cannot give one stops the command before anything is sent (exit 3).
pub(crate) async fn tokens(
    staging: &crate::config::Staging,
    source: &TokenSource,
) -> Result<Arc<Tokens>, Failure> {
    let http = staging.http()?;
    let tokens = if let TokenSource::Static { token, file: None } = source {
        Tokens::given(token.clone(), http).map_err(Failure::NoToken)?
    } else {
        Tokens::start(source.clone(), http)
            .await
            .map_err(Failure::NoToken)?
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

//! Opening a command's target: the embedded sandbox on an ephemeral loopback port (with its own
//! token), or the remote API with the partner's token.

use std::time::Duration;

use std::sync::Arc;

use crate::config::{Target, TokenSource};
use crate::engine::Tokens;
use crate::error::Failure;
use crate::sandbox::{ApiDialect, Sandbox, SandboxOptions};
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

/// The embedded sandbox enforces the dialect a run speaks, where it knows it.
pub(crate) fn sandbox_dialect(dialect: &str) -> ApiDialect {
    if dialect == "provider-docs" {
        ApiDialect::ProviderDocs
    } else {
        ApiDialect::Spec
    }
}

pub(crate) async fn open<Token: Credential>(
    target: &Target<Token>,
    claim_step: Duration,
    dialect: ApiDialect,
) -> Result<Opened<Token>, Failure> {
    let options = SandboxOptions {
        claim_step,
        dialect,
        ..SandboxOptions::default()
    };
    open_with(target, options).await
}

/// As [`open`], with every option of the embedded sandbox given (a run's webhooks).
pub(crate) async fn open_with<Token: Credential>(
    target: &Target<Token>,
    options: SandboxOptions,
) -> Result<Opened<Token>, Failure> {
    match target {
        Target::Embedded => {
            let sandbox = Sandbox::start(options)
                .await
                .map_err(Failure::SandboxStart)?;
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
    let tokens = if let TokenSource::Static { token, file: None } = source {
        Tokens::fixed(token.clone())
    } else {
        let http = http(staging)?;
        Tokens::start(source.clone(), http)
            .await
            .map_err(Failure::NoToken)?
    };
    // What `env.NAME` templates read is scrubbed wherever a token would be.
    tokens.also_scrub(&staging.secrets);
    Ok(tokens)
}

/// The HTTP client of the staging: its timeout, TLS roots and client certificate.
pub(crate) fn http(staging: &crate::config::Staging) -> Result<reqwest::Client, Failure> {
    crate::engine::client::http_client(
        staging.timeout,
        staging.cacert.as_deref(),
        staging.identity.as_ref().map(|i| i.pem()),
    )
    .map_err(Failure::from)
}

/// The API client every command talks to a staging with: the staging's timeout and TLS roots.
pub(crate) fn client(
    staging: &crate::config::Staging,
    base_url: &str,
    tokens: Arc<Tokens>,
    retries: u32,
) -> Result<crate::engine::ApiClient, Failure> {
    client_with_backoff(
        staging,
        base_url,
        tokens,
        retries,
        Duration::from_millis(500),
    )
}

pub(crate) fn client_with_backoff(
    staging: &crate::config::Staging,
    base_url: &str,
    tokens: Arc<Tokens>,
    retries: u32,
    backoff: Duration,
) -> Result<crate::engine::ApiClient, Failure> {
    Ok(crate::engine::ApiClient::new(
        base_url,
        tokens,
        http(staging)?,
        retries,
        backoff,
    ))
}

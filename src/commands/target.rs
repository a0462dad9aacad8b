//! Opening a command's target: the embedded sandbox on an ephemeral loopback port (with its own
//! token), or the remote API with the partner's token.

use std::time::Duration;

use crate::config::Target;
use crate::error::Failure;
use crate::sandbox::{ApiDialect, Sandbox, SandboxOptions};
use crate::secret::Secret;

pub struct Opened {
    /// Kept alive for as long as the command talks to it.
    pub sandbox: Option<Sandbox>,
    /// The API root, without a trailing slash.
    pub base_url: String,
    pub token: Secret,
}

/// The embedded sandbox enforces the dialect a run speaks, where it knows it.
pub fn sandbox_dialect(dialect: &str) -> ApiDialect {
    if dialect == "provider-docs" {
        ApiDialect::ProviderDocs
    } else {
        ApiDialect::Spec
    }
}

pub async fn open(
    target: &Target,
    token: Option<&Secret>,
    claim_step: Duration,
    dialect: ApiDialect,
) -> Result<Opened, Failure> {
    let options = SandboxOptions {
        claim_step,
        dialect,
        ..SandboxOptions::default()
    };
    open_with(target, token, options).await
}

/// As [`open`], with every option of the embedded sandbox given (a run's webhooks).
pub async fn open_with(
    target: &Target,
    token: Option<&Secret>,
    options: SandboxOptions,
) -> Result<Opened, Failure> {
    match target {
        Target::Embedded => {
            let sandbox = Sandbox::start(options)
                .await
                .map_err(|e| Failure::usage(format!("cannot start the embedded sandbox: {e}")))?;
            let (base_url, token) = (sandbox.base_url(), Secret::new(sandbox.token()));
            Ok(Opened {
                sandbox: Some(sandbox),
                base_url,
                token,
            })
        }
        Target::Remote { base_url, .. } => Ok(Opened {
            sandbox: None,
            base_url: base_url.as_str().trim_end_matches('/').to_string(),
            token: token.cloned().ok_or_else(|| {
                Failure::usage("a target needs a token: set PPCERT_TOKEN or pass --token-file PATH")
            })?,
        }),
    }
}

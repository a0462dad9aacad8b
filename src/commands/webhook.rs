//! `ppcert webhook listen` and `send`, with the secret from a file or the environment.

use std::path::Path;

use crate::cli::WebhookListenArgs;
use crate::error::Failure;
use crate::exit_codes;
use crate::webhook::listen::{Listener, serve};

/// The secret: `--webhook-secret-file` beats `PPCERT_WEBHOOK_SECRET`; never a plain flag.
pub fn secret(file: Option<&Path>) -> Result<Vec<u8>, Failure> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure::usage(format!(
                "--webhook-secret-file {}: cannot read: {e}",
                path.display()
            ))
        })?;
        return Ok(text.trim().as_bytes().to_vec());
    }
    crate::env::webhook_secret()
        .map(|s| s.trim().as_bytes().to_vec())
        .ok_or_else(|| {
            Failure::usage("a webhook secret is needed: set PPCERT_WEBHOOK_SECRET or pass --webhook-secret-file PATH")
        })
}

pub async fn listen(args: WebhookListenArgs) -> Result<u8, Failure> {
    let secret = secret(args.webhook_secret_file.as_deref())?;
    let listener = Listener::new(args.scheme, secret, args.out.clone());
    serve(args.addr, listener)
        .await
        .map_err(|e| Failure::usage(format!("cannot listen on {}: {e}", args.addr)))?;
    Ok(exit_codes::SUCCESS)
}

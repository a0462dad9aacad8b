//! `ppcert webhook listen`: the receiver, with its secret from a file or the environment.

use crate::cli::WebhookListenArgs;
use crate::error::Failure;
use crate::exit_codes;
use crate::webhook::listen::{Listener, serve};
use crate::webhook::scheme::Scheme;

/// The secret: `--webhook-secret-file` beats `PPCERT_WEBHOOK_SECRET`; never a plain flag.
fn secret(args: &WebhookListenArgs) -> Result<Vec<u8>, Failure> {
    if let Some(path) = &args.webhook_secret_file {
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
    let scheme = Scheme::parse(&args.scheme).map_err(Failure::usage)?;
    let listener = Listener::new(scheme, secret(&args)?, args.out.clone());
    serve(args.addr, listener)
        .await
        .map_err(|e| Failure::usage(format!("cannot listen on {}: {e}", args.addr)))?;
    Ok(exit_codes::SUCCESS)
}

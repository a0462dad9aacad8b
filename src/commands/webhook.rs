//! `ppcert webhook listen` and `send`, with the secret from a file or the environment.

use std::path::Path;

use crate::cli::{WebhookListenArgs, WebhookSendArgs};
use crate::error::{AfterSending, Failure, Judgement, Refusal};
use crate::exit_codes;
use crate::webhook::listen::{Listener, serve};
use crate::webhook::scheme::Scheme;

/// The secret: `--webhook-secret-file` beats `PPCERT_WEBHOOK_SECRET`; never a plain flag.
pub(crate) fn secret(file: Option<&Path>) -> Result<Vec<u8>, Failure> {
    if let Some(path) = file {
        // Capped: a wrong path (a log, /dev/zero) must not be read until memory runs out.
        let text = crate::config::read_secret_text(path, "--webhook-secret-file")
            .map_err(crate::config::ConfigError::from)?;
        if text.trim().is_empty() {
            // An empty HMAC key is a key everyone has: every forged delivery would verify.
            return Err(Failure::WebhookSecret(format!(
                "--webhook-secret-file {}: empty; with no secret anyone can sign a delivery",
                path.display()
            )));
        }
        return Ok(text.trim().as_bytes().to_vec());
    }
    crate::env::webhook_secret()
        .map(|s| s.trim().as_bytes().to_vec())
        .ok_or_else(|| {
            Failure::WebhookSecret("a webhook secret is needed: set PPCERT_WEBHOOK_SECRET or pass --webhook-secret-file PATH".into())
        })
}

/// The secret, checked for `scheme`: a Standard Webhooks `whsec_` secret must decode.
pub(crate) fn secret_for(scheme: Scheme, file: Option<&Path>) -> Result<Vec<u8>, Failure> {
    let secret = secret(file)?;
    crate::webhook::scheme::signing_key(scheme, &secret).map_err(Failure::WebhookSecret)?;
    Ok(secret)
}

pub(crate) async fn listen(args: WebhookListenArgs) -> Result<u8, Failure> {
    let secret = secret_for(args.scheme, args.webhook_secret_file.as_deref())?;
    super::listening::check_exposure(
        args.addr,
        args.listen_limits.public,
        "--addr",
        "the webhook receiver (it answers anyone; only deliveries signed with the secret are accepted)",
    )?;
    let limits = super::listening::limits(
        &args.listen_limits,
        crate::sandbox::listener::DEFAULT_MAX_BODY,
    );
    let listener = Listener::new(args.scheme, secret, args.out.clone());
    let stop = crate::ctrl_c::first_ctrl_c("stopping: letting deliveries in flight finish");
    serve(args.addr, listener, limits, stop)
        .await
        .map_err(|error| Failure::ListenOn {
            addr: args.addr,
            error,
        })?;
    Ok(exit_codes::SUCCESS)
}

/// Grades the receiver at `--url`; exit 0 only when every expectation holds, 4 when nothing
/// answered at all.
pub(crate) async fn send(args: WebhookSendArgs) -> Result<u8, Failure> {
    use crate::webhook::send::{Verdict, cases, grade, table};
    let secret = secret_for(args.scheme, args.webhook_secret_file.as_deref())?;
    // A --junit file that cannot be written is said before anything is sent (exit 2).
    if let Some(path) = &args.junit {
        let dir = (path.parent())
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() || path.is_dir() {
            return Err(Refusal::JunitNotAFile { path: path.clone() }.into());
        }
    }
    let client = crate::config::webhook_http()?;
    let graded = grade(&client, args.url.as_str(), cases(args.scheme, &secret)).await;
    crate::console::say!("{}", table(&graded).trim_end());
    write_junit(&args, &graded)?;
    let broken = graded.iter().filter(|g| g.verdict != Verdict::Held).count();
    if graded.iter().all(|g| !g.reached) {
        crate::console::tell!("nothing answered at {}", args.url);
        return Ok(Judgement::NothingAnswered.exit_code());
    }
    if broken > 0 {
        crate::console::tell!("{broken} of {} expectations not met", graded.len());
        return Ok(Judgement::NotMet.exit_code());
    }
    crate::console::tell!("every expectation met ({} deliveries)", graded.len());
    Ok(exit_codes::SUCCESS)
}

/// Writes `--junit` once the deliveries were sent: a file that cannot be written is then
/// exit 6, never the "nothing sent" exit 2, whatever the error says.
fn write_junit(
    args: &WebhookSendArgs,
    graded: &[crate::webhook::send::Graded],
) -> Result<(), AfterSending> {
    let Some(path) = &args.junit else {
        return Ok(());
    };
    let xml =
        crate::webhook::send::junit(args.url.as_str(), graded).map_err(|e| Failure::Encode {
            what: "cannot render JUnit",
            error: e.into(),
        })?;
    std::fs::write(path, xml).map_err(|error| Failure::JunitNotWritten {
        path: path.clone(),
        error,
    })?;
    Ok(())
}

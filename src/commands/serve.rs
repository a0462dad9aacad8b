//! `ppcert serve`: the sandbox standalone, until Ctrl-C.

use std::time::Duration;

use crate::cli::ServeArgs;
use crate::error::{Failure, Refusal};
use crate::exit_codes;
use crate::sandbox::{Layout, Sandbox, SandboxOptions, WebhookOptions, random_token};

/// A `--path-prefix` is `/segment[/segment…]` of URL-safe characters.
fn check_path_prefix(prefix: Option<&str>) -> Result<(), Failure> {
    let Some(prefix) = prefix else { return Ok(()) };
    let plain = |c: char| c.is_ascii_alphanumeric() || "/-._~".contains(c);
    if !prefix.starts_with('/') || !prefix.chars().all(plain) || prefix.contains("//") {
        let prefix = prefix.to_owned();
        return Err(Refusal::PathPrefix { prefix }.into());
    }
    Ok(())
}

/// `--subscription-operations-ms` and `--failed-operations-every`.
fn operations(args: &ServeArgs) -> Option<crate::sandbox::SubscriptionOperations> {
    let ms = args.subscription_operations_ms?;
    Some(crate::sandbox::SubscriptionOperations {
        running_for: Duration::from_millis(ms),
        fail_every: args.failed_operations_every,
    })
}

/// Turns `serve`'s flags into sandbox options, refusing a non-loopback address without
/// `--public`.
pub(crate) fn options(args: &ServeArgs) -> Result<SandboxOptions, Failure> {
    super::listening::check_exposure(
        args.addr,
        args.listen_limits.public,
        "--addr",
        "the sandbox API (anyone with its printed token can create bookings) and its OpenAPI document",
    )?;
    check_path_prefix(args.path_prefix.as_deref())?;
    let webhooks = webhooks(args)?;
    Ok(SandboxOptions {
        webhooks,
        addr: args.addr,
        token: args.token.clone().unwrap_or_else(random_token),
        latency: Duration::from_millis(args.latency_ms),
        jitter: Duration::from_millis(args.jitter_ms),
        rate_limit_every: args.rate_limit_every,
        rate_limit_header: args.rate_limit_header,
        require_idempotency_key: args.require_idempotency_key,
        contracts_delay: args.contracts_delay_ms.map(Duration::from_millis),
        require_if_match: args.require_if_match,
        token_ttl: args.token_ttl.map(Duration::from_secs),
        client_id: args.client_id.clone(),
        retry_after_secs: args.retry_after_secs,
        unavailable_every: args.unavailable_every,
        drop_every: args.drop_every,
        error_after_write_every: args.error_after_write_every,
        production: args.production,
        layout: layout(args),
        claim_step: Duration::from_millis(args.claim_step_ms),
        claims_decided_after: args.claims_decided_after_ms.map(Duration::from_millis),
        subscription_operations: operations(args),
        booking_number_pattern: booking_number_pattern(args)?,
        path_prefix: args.path_prefix.clone(),
        dialect: args.dialect,
        max_open_quotes: args.max_quotes,
        max_bookings: args.max_bookings,
        quote_bundles: args.quote_bundles.clone(),
        limits: super::listening::limits(
            &args.listen_limits,
            crate::sandbox::listener::DEFAULT_MAX_BODY,
        ),
        transport: super::serve_transport::transport(&args.transport)?,
        quirks: crate::sandbox::Quirks {
            trailing_slash: args.quirks.trailing_slash,
            utc_only: args.quirks.utc_only,
            flight_status_put: args.quirks.flight_status_put,
        },
        wire: crate::sandbox::Wire {
            media_type: args.wire.media_type.clone(),
            json_patch_updates: args.wire.json_patch_updates,
            multipart_claims: args.wire.multipart_claims,
        },
    })
}

/// `--booking-number-pattern`, checked to be a regex before the sandbox starts.
fn booking_number_pattern(args: &ServeArgs) -> Result<Option<String>, Failure> {
    let Some(pattern) = &args.booking_number_pattern else {
        return Ok(None);
    };
    regex::Regex::new(pattern)
        .map(|_| Some(pattern.clone()))
        .map_err(|e| Failure::Pattern {
            key: "--booking-number-pattern",
            why: e.to_string(),
        })
}

/// The answers' shapes the flags ask for.
fn layout(args: &ServeArgs) -> Layout {
    Layout {
        wrap: !args.unwrapped,
        contracts: args.contracts_layout,
        update_status: args.update_status,
        price_delta: args.delta_shape,
        delete_status: args.delete_status,
        quote_wrapper: args.quote_wrapper,
        nested_contract_objects: args.nested_contract_objects,
        integer_ids: args.integer_ids,
        empty_created: args.empty_created,
        errors: args.errors,
        claim_date_day_only: args.claim_date_day_only,
        claim_status: args.claim_status,
        location_ids: args.location_ids,
    }
}

/// The webhooks `--webhook-url` asks for, signed with the scheme's secret.
fn webhooks(args: &ServeArgs) -> Result<Option<WebhookOptions>, Failure> {
    let webhooks = match &args.webhook_url {
        Some(url) => {
            let secret = super::webhook::secret_for(
                args.webhook_scheme,
                args.webhook_secret_file.as_deref(),
            )?;
            let mut webhooks = WebhookOptions::new(url.as_str(), args.webhook_scheme, secret);
            webhooks.log = true;
            Some(webhooks)
        }
        None => None,
    };
    Ok(webhooks)
}

pub(crate) async fn serve(args: ServeArgs) -> Result<u8, Failure> {
    let options = options(&args)?;
    let sandbox = Sandbox::start(options)
        .await
        .map_err(|error| Failure::ListenOn {
            addr: args.addr,
            error,
        })?;
    let stop = crate::ctrl_c::first_ctrl_c("stopping: letting in-flight requests finish");
    // The sandbox's own development token is printed on purpose: it is how a partner talks to it.
    crate::console::say!("ppcert sandbox listening on {}", sandbox.base_url());
    crate::console::say!("token: {}", sandbox.token());
    crate::console::say!("OpenAPI document: {}", sandbox.openapi_url());
    if let Some(ttl) = args.token_ttl {
        crate::console::say!(
            "tokens: POST {}/oauth/token (client credentials: client id {}, the token above as the secret), each valid {ttl} s",
            sandbox.root_url(),
            args.client_id
        );
    }
    if let Some(url) = &args.webhook_url {
        crate::console::say!("webhooks: {url} (scheme {})", args.webhook_scheme.name());
    }
    crate::console::tell!("press Ctrl-C to stop");
    stop.await;
    sandbox.shutdown().await.map_err(Failure::SandboxStopped)?;
    Ok(exit_codes::SUCCESS)
}

//! `ppcert check-token`: POST /quotes once; any answer but 401 means the token is valid (the spec's section on authentication).

use serde_json::json;

use crate::cli::TargetArgs;
use crate::config;
use crate::engine::{Cancel, http::Request};
use crate::error::Failure;
use crate::exit_codes;
use crate::models::Operation;

pub(crate) async fn check_token(args: TargetArgs) -> Result<u8, Failure> {
    let staging = config::Staging::load(&args)?;
    let target = config::target(&args, &staging.file)?;
    let opened = super::target::open(&target, staging.embedded_sandbox()).await?;
    let tokens = super::target::tokens(&staging, &opened.token).await?;
    // One retry at most, with run's waits: a busy staging gets a second chance, no more.
    let retry = config::RetryPolicy::resolve(None, None, &staging.file)?.at_most(1);
    let client = super::target::client(&staging, &opened.base_url, tokens.clone(), retry)?;
    // A quote with nothing in it: a valid token gets a 400 and nothing is created; a bad one
    // gets the 401 the spec promises before any validation.
    // The quote call as the staging's configuration defines it (path, headers), so the token
    // is tried where a run will use it.
    let (context, _) = crate::endpoints::context::sample(Operation::Quote);
    let endpoints = &staging.endpoints;
    let request = Request {
        method: endpoints.method(Operation::Quote),
        path: endpoints.path(Operation::Quote, &context)?,
        headers: endpoints.headers(Operation::Quote, &context)?,
        body: Some(crate::endpoints::Payload::Json(json!({ "data": {} }))),
        wrong_token: None,
        retry_without_answer: false,
        renew_on_rejection: true,
        first_attempt: 1,
    };
    let attempts = client.execute(&request, &Cancel::default()).await;
    let last = attempts.last().expect("one attempt at least");
    judge(last, &tokens.fingerprint())
}

/// Any answer but 401 means the token is valid; a 404 or 405 means the URL is not the API's.
fn judge(last: &crate::engine::http::Attempt, fingerprint: &str) -> Result<u8, Failure> {
    let words = || {
        last.response
            .as_ref()
            .map(|r| r.describe())
            .unwrap_or_default()
    };
    match last.status() {
        Some(401) if !last.response.as_ref().is_some_and(|r| r.rejects_token()) => {
            Err(Failure::Inconclusive(format!(
                "POST {} answered 401, but not about the token: {}; the token could not be judged",
                last.url,
                words()
            )))
        }
        Some(401) => Err(Failure::TokenRejected(format!(
            "token {fingerprint}… rejected: POST {} answered 401: {}",
            last.url,
            last.response
                .as_ref()
                .map(|r| r.describe())
                .unwrap_or_default()
        ))),
        Some(status @ (404 | 405)) => Err(Failure::Unreachable(format!(
            "POST {} answered {status}: that is not the quotes endpoint, so nothing is known of the token; check --base-url (it should be the API root, with any path prefix)",
            last.url
        ))),
        Some(status) => {
            crate::console::say!(
                "token {fingerprint}… is valid: POST {} answered {status} (any answer but 401 means valid; the empty quote created nothing)",
                last.url
            );
            Ok(exit_codes::SUCCESS)
        }
        None => Err(Failure::Unreachable(format!(
            "{} could not be reached: {}",
            last.url,
            last.error.as_deref().unwrap_or("no answer")
        ))),
    }
}

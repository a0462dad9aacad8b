//! `ppcert check-token`: POST /quotes once; any answer but 401 means the token is valid (spec §5.3).

use serde_json::json;

use crate::cli::TargetArgs;
use crate::config;
use crate::engine::{ApiClient, Cancel, client::Request};
use crate::error::Failure;
use crate::exit_codes;
use crate::sandbox::SandboxOptions;

pub async fn check_token(args: TargetArgs) -> Result<u8, Failure> {
    let file = config::load_file(args.config.as_deref()).map_err(Failure::usage)?;
    let target = config::target(&args, &file).map_err(Failure::usage)?;
    let opened = super::target::open(
        &target,
        SandboxOptions::default().claim_step,
        crate::sandbox::ApiDialect::Spec,
    )
    .await?;
    let (base_url, token) = (opened.base_url.clone(), opened.token.clone());
    let timeout = crate::config::request_timeout(&args, &file);
    let client = ApiClient::new(
        &base_url,
        token.clone(),
        timeout,
        1,
        std::time::Duration::from_millis(500),
        args.cacert.as_deref(),
    )
    .map_err(Failure::usage)?;
    // A quote with nothing in it: a valid token gets a 400 and nothing is created; a bad one
    // gets the 401 the spec promises before any validation.
    let request = Request {
        method: reqwest::Method::POST,
        path: "/quotes".into(),
        body: Some(json!({ "data": {} })),
        wrong_token: None,
        retry_without_answer: false,
    };
    let attempts = client.execute(&request, &Cancel::default()).await;
    let last = attempts.last().expect("one attempt at least");
    judge(last, &token.fingerprint())
}

/// Any answer but 401 means the token is valid; a 404 or 405 means the URL is not the API's.
fn judge(last: &crate::engine::client::Attempt, fingerprint: &str) -> Result<u8, Failure> {
    match last.status() {
        Some(401) => Err(Failure::new(
            exit_codes::TOKEN_REJECTED,
            format!(
                "token {fingerprint}… rejected: POST {} answered 401",
                last.url
            ),
        )),
        Some(status @ (404 | 405)) => Err(Failure::new(
            exit_codes::UNREACHABLE,
            format!(
                "POST {} answered {status}: that is not the quotes endpoint, so nothing is known of the token; check --base-url (it should be the API root, with any path prefix)",
                last.url
            ),
        )),
        Some(status) => {
            crate::say!(
                "token {fingerprint}… is valid: POST {} answered {status} (any answer but 401 means valid; the empty quote created nothing)",
                last.url
            );
            Ok(exit_codes::SUCCESS)
        }
        None => Err(Failure::new(
            exit_codes::UNREACHABLE,
            format!(
                "{} could not be reached: {}",
                last.url,
                last.error.as_deref().unwrap_or("no answer")
            ),
        )),
    }
}

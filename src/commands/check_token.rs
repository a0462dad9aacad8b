//! `ppcert check-token`: POST /quotes once; any answer but 401 means the token is valid (spec §5.3).

use chrono::Utc;
use serde_json::json;

use crate::cli::TargetArgs;
use crate::config;
use crate::datagen::{DataProfile, Generator, run_id};
use crate::engine::{ApiClient, Cancel, client::Request};
use crate::error::Failure;
use crate::exit_codes;
use crate::models::Envelope;
use crate::sandbox::SandboxOptions;

pub async fn check_token(args: TargetArgs) -> Result<u8, Failure> {
    let file = config::load_file(args.config.as_deref()).map_err(Failure::usage)?;
    let (target, token) = config::target(&args, &file).map_err(Failure::usage)?;
    if matches!(target, config::Target::Embedded) && token.is_some() {
        return Err(Failure::usage(config::TOKEN_WITHOUT_TARGET));
    }
    let opened = super::target::open(
        &target,
        token.as_ref(),
        SandboxOptions::default().claim_step,
        crate::sandbox::ApiDialect::Spec,
    )
    .await?;
    let (base_url, token) = (opened.base_url.clone(), opened.token.clone());
    let timeout =
        std::time::Duration::from_secs(args.timeout.or(file.run.timeout_secs).unwrap_or(30));
    let client = ApiClient::new(
        &base_url,
        token.clone(),
        timeout,
        1,
        std::time::Duration::from_millis(500),
    )
    .map_err(Failure::usage)?;
    let start = Utc::now();
    let seed = rand::random();
    let booking =
        Generator::new(seed, run_id(start, seed), start, DataProfile::default()).booking(0);
    let request = Request {
        method: reqwest::Method::POST,
        path: "/quotes".into(),
        body: Some(json!(Envelope {
            data: booking.quote_request(0, false)
        })),
        wrong_token: None,
    };
    let attempts = client.execute(&request, &Cancel::default()).await;
    let last = attempts.last().expect("one attempt at least");
    let fingerprint = token.fingerprint();
    match last.status() {
        Some(401) => Err(Failure::new(
            exit_codes::TOKEN_REJECTED,
            format!(
                "token {fingerprint}… rejected: POST {} answered 401",
                last.url
            ),
        )),
        Some(status) => {
            crate::say!(
                "token {fingerprint}… is valid: POST {} answered {status} (any answer but 401 means valid)",
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

//! `ppcert.toml` and the validated run configuration: flags beat the file, which beats defaults.
//! Raw arguments become a [`RunConfig`] before any request is sent.

mod auth;
mod base_url;
mod build;
mod data;
mod error;
mod file;
mod file_errors;
pub(crate) mod headers;
mod http;
mod lenient;
mod opened;
mod pkcs12;
mod resumed;
mod schema;
mod secrets;
mod staging;
mod target;
pub(crate) mod tls;

use std::num::{NonZeroU32, NonZeroUsize};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use crate::bounds::{self, OutOfBounds};
use crate::cli::RunArgs;
use crate::scenario::{self, LoadedScenario};

pub(crate) use auth::{ClientAuth, ClientCredentials, TokenSource};
pub(crate) use build::{RetryPolicy, webhook_http};
pub(crate) use error::{ConfigError, ResumeError, SecretError};
pub use file::{DEFAULT_CONFIG, FileConfig, load_file, parse_file};
pub use file_errors::FileErrors;
pub(crate) use opened::{Credential, Opened};
pub(crate) use resumed::Recorded;
pub use schema::config_schema;
pub(crate) use secrets::{read_secret_file, read_secret_text};
pub(crate) use staging::Staging;
use target::with_token;
pub(crate) use target::{Environment, Target, Upstream, target, upstream};

/// The scenario a run takes when `--scenario` is left out: the provider's validation batch.
pub(crate) const DEFAULT_SCENARIO: &str = "certification";

/// Everything a run needs, validated.
#[derive(Debug, Clone)]
pub(crate) struct RunConfig {
    /// A remote target holds its token.
    pub target: Target,
    pub partner_name: String,
    pub flight_seller: bool,
    pub scenario: LoadedScenario,
    pub out: Option<PathBuf>,
    pub seed: Option<u64>,
    pub concurrency: NonZeroUsize,
    /// How calls retry: `RunConfig::retry_policy`.
    retry: RetryPolicy,
    pub scale: NonZeroU32,
    /// The interrupted run's directory, whose recorded values are already merged in.
    pub resume: Option<PathBuf>,
    /// The reports written besides evidence.json, the journal and the manifest.
    pub formats: Vec<crate::formats::Format>,
    pub webhooks: Option<WebhookRun>,
    /// The staging as every command resolves it (the file read once): dialect, endpoints,
    /// timeout and TLS roots.
    pub staging: Staging,
    /// Said in the evidence of a resumed run whose static token changed.
    pub resume_note: Option<String>,
}

/// How a run receives webhooks.
#[derive(Debug, Clone)]
pub(crate) struct WebhookRun {
    /// Where to listen: an ephemeral loopback port for the embedded sandbox, else the user's.
    pub addr: std::net::SocketAddr,
    pub scheme: crate::webhook::scheme::Scheme,
    /// The embedded sandbox delivers, signing with a fresh secret per run.
    pub sandbox_delivers: bool,
    /// Else the staging's secret: this file, or `PPCERT_WEBHOOK_SECRET`.
    pub secret_file: Option<PathBuf>,
    /// `--public`: a non-loopback `addr` is allowed.
    pub public: bool,
}

/// `--webhooks` belongs to the embedded sandbox; a staging delivers where it was told, so
/// against one the run listens on `--webhook-listen`.
fn webhook_run(
    args: &crate::cli::RunWebhookArgs,
    target: &Target,
) -> Result<Option<WebhookRun>, ConfigError> {
    let embedded = target.is_embedded();
    match (&args.webhook_listen, args.webhooks) {
        (None, false) => Ok(None),
        (None, true) if !embedded => Err(ConfigError::WebhooksWithoutListen),
        (None, true) => Ok(Some(WebhookRun {
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            scheme: args.webhook_scheme,
            sandbox_delivers: true,
            secret_file: None,
            public: false,
        })),
        (Some(addr), _) => Ok(Some(WebhookRun {
            addr: *addr,
            scheme: args.webhook_scheme,
            sandbox_delivers: embedded,
            secret_file: args.webhook_secret_file.clone(),
            public: args.public,
        })),
    }
}

/// The partner the bundle names: the flag, else `[partner] name`, else a placeholder.
pub(crate) fn partner_name(flag: Option<&String>, file: &FileConfig) -> String {
    flag.or(file.partner.name.as_ref())
        .cloned()
        .unwrap_or_else(|| UNNAMED_PARTNER.into())
}

/// The partner's name when neither `--partner-name` nor `[partner] name` gives one.
pub(crate) const UNNAMED_PARTNER: &str = "Unnamed partner";

/// The warning a bundle for a staging carries when no partner name was given: the provider
/// cannot attribute evidence of "Unnamed partner".
pub(crate) fn unnamed_warning(partner_name: &str, remote: bool) -> Option<String> {
    (remote && partner_name == UNNAMED_PARTNER).then(|| {
        "no partner name: the evidence says \"Unnamed partner\", which the provider cannot attribute; set [partner] name in ppcert.toml (or --partner-name, PPCERT_PARTNER_NAME) before handing it over".to_string()
    })
}

/// A flight seller (so flight cancellations are required) unless the flag or the file says not.
pub(crate) fn flight_seller(no_flight_cancellations: bool, file: &FileConfig) -> bool {
    !no_flight_cancellations && file.partner.flight_seller.unwrap_or(true)
}

/// A count within its bounds, which start at one.
fn positive(key: &str, value: u32, range: &RangeInclusive<i64>) -> Result<NonZeroU32, OutOfBounds> {
    bounds::check(key, i64::from(value), range)?;
    NonZeroU32::new(value).ok_or_else(|| OutOfBounds {
        key: key.to_string(),
        value: 0,
        start: 1,
        end: (*range.end()).into(),
    })
}

/// What the flags and file (and a resumed run's record) say: target, scenario and scale, and
/// what the evidence notes of a resumed run's token.
type Chosen = (Target, LoadedScenario, u32, Option<String>);

fn fresh(args: &RunArgs, file: &FileConfig) -> Result<Chosen, ConfigError> {
    let name = args.scenario.as_deref().unwrap_or(DEFAULT_SCENARIO);
    Ok((
        target(&args.target, file)?,
        scenario::resolve(name, Path::new(".")).map_err(ConfigError::Scenario)?,
        args.scale.unwrap_or(1),
        None,
    ))
}

/// The same, with the interrupted run's record filling what the invocation leaves out.
fn resumed(args: &RunArgs, file: &FileConfig, run: &Recorded) -> Result<Chosen, ConfigError> {
    // Only the flag contradicts the record: a config file's environment (probe writes
    // "staging") gives way to the environment the run was recorded in.
    let upstream = resumed::upstream(upstream(&args.target, file)?, args.target.environment, run)?;
    let token = auth::token_source(&args.target, file)?;
    // Before the target is built: a resumed run without a token is told so in its own words.
    let note = resumed::check_token(token.as_ref(), run)?;
    Ok((
        with_token(upstream, token)?,
        resumed::scenario(run, args.scenario.as_deref(), Path::new("."))?,
        resumed::scale(args.scale, run)?.get(),
        note,
    ))
}

/// Every `captured.NAME` a template reads is captured by an earlier call of each flow that
/// makes the call (see [`Endpoints::check_flow`](crate::endpoints::Endpoints::check_flow)).
fn check_captured(
    args: &crate::cli::TargetArgs,
    staging: &Staging,
    scenario: &LoadedScenario,
) -> Result<(), ConfigError> {
    for flow in &scenario.scenario.flows {
        let steps: Vec<crate::endpoints::FlowStep> = (flow.steps.iter())
            .map(|step| crate::endpoints::FlowStep {
                name: step.name(),
                operations: step.operations(),
            })
            .collect();
        staging
            .endpoints
            .check_flow(&flow.name, &steps)
            .map_err(|error| ConfigError::CapturedTooEarly {
                file: (args.config.as_deref())
                    .unwrap_or(std::path::Path::new(DEFAULT_CONFIG))
                    .display()
                    .to_string(),
                scenario: scenario.scenario.name.clone(),
                error: Box::new(error),
            })?;
    }
    Ok(())
}

impl RunConfig {
    /// Merges defaults < `ppcert.toml` < environment < flags, with an interrupted run's
    /// recorded values (`--resume`) filling what the invocation leaves out, then validates the
    /// whole once.
    pub(crate) fn from_args(
        args: &RunArgs,
        recorded: Option<&Recorded>,
    ) -> Result<RunConfig, ConfigError> {
        let staging = Staging::load(&args.target)?;
        let file = &staging.file;
        let (target, mut scenario, scale, resume_note) = match recorded {
            None => fresh(args, file)?,
            Some(run) => resumed(args, file, run)?,
        };
        check_captured(&args.target, &staging, &scenario)?;
        let scale = positive("--scale", scale, &bounds::SCALE)?;
        let flows: u64 = scenario
            .scenario
            .flows
            .iter()
            .map(|f| u64::from(f.repeat))
            .sum();
        bounds::check(
            "flow instances (repeats × --scale)",
            flows.saturating_mul(u64::from(scale.get())),
            &bounds::FLOW_INSTANCES,
        )?;
        let file_name = (args.target.config.as_deref())
            .map_or_else(|| file::DEFAULT_CONFIG.into(), |p| p.display().to_string());
        data::apply(
            &mut scenario.scenario.data,
            file,
            &file_name,
            flows.saturating_mul(u64::from(scale.get())),
            &scenario.source.to_string(),
        )?;
        let concurrency = args.concurrency.or(file.run.concurrency).unwrap_or(4);
        let concurrency = positive("concurrency", concurrency, &bounds::CONCURRENCY)?;
        let retry = RetryPolicy::resolve(args.retries, args.backoff_ms, file)?;
        let flight_seller = flight_seller(args.no_flight_cancellations, file);
        if let Some(run) = recorded {
            resumed::check_shape(run, flight_seller, staging.dialect_name(), args.seed)?;
        }
        let webhooks = webhook_run(&args.webhooks, &target)?;
        Ok(RunConfig {
            target,
            partner_name: partner_name(args.partner_name.as_ref(), file),
            flight_seller,
            scenario,
            out: args.out.clone(),
            seed: args.seed,
            // Within 1..=1024, it fits any usize.
            concurrency: NonZeroUsize::try_from(concurrency).unwrap_or(NonZeroUsize::MIN),
            retry,
            scale,
            resume: args.resume.clone(),
            formats: if args.format.is_empty() {
                crate::formats::Format::ALL.to_vec()
            } else {
                args.format.iter().flatten().copied().collect()
            },
            webhooks,
            staging,
            resume_note,
        })
    }

    pub(crate) fn environment(&self) -> Environment {
        self.target.environment()
    }

    /// How the run's calls retry (`probe` narrows it to one retry).
    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// The run's embedded sandbox (see `Staging::run_sandbox`).
    pub(crate) fn embedded_sandbox(
        &self,
        webhooks: Option<crate::sandbox::WebhookOptions>,
    ) -> crate::sandbox::SandboxOptions {
        self.staging.run_sandbox(self.concurrency, webhooks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partner_comes_from_the_flag_then_the_file_then_the_default() {
        let named = parse_file(
            "p.toml",
            "[partner]\nname = \"Acme\"\nflight_seller = false\n",
        )
        .unwrap();
        let empty = parse_file("p.toml", "").unwrap();
        let flag = "Flag Travel".to_string();
        assert_eq!(partner_name(Some(&flag), &named), "Flag Travel");
        assert_eq!(partner_name(None, &named), "Acme");
        assert_eq!(partner_name(None, &empty), "Unnamed partner");
        assert!(flight_seller(false, &empty));
        assert!(!flight_seller(false, &named));
        assert!(!flight_seller(true, &empty));
    }
}

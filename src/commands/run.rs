//! `ppcert run`: run a scenario against the target (or the embedded sandbox), record every
//! exchange, and write the evidence bundle.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};

use super::resume::read_previous;
use super::run_webhooks::RunReceiver;
use crate::cli::RunArgs;
use crate::config::{RunConfig, Target};
use crate::datagen::{Generator, run_id};
use crate::engine::{
    self, ApiClient, Cancel, FlowInstance, FlowResult, FlowStatus, Gate, GateState, RunEvent,
    Shared,
};
use crate::error::{Failure, FirstCall, RunOutcome, run_exit_code};
use crate::evidence::collect::Recording;
use crate::evidence::{self, Evidence, Partner, RunInfo, TargetInfo};
use crate::journal::{self, Journal, Line};
use crate::models::Operation;
use crate::output::{OutputMode, Progress};
use crate::sandbox::SandboxOptions;
use crate::scenario::Step;
use crate::secret::Secret;

/// How long a claim stays in each status in the embedded sandbox: short, so runs that await
/// REFUNDED finish in seconds.
const EMBEDDED_CLAIM_STEP: Duration = Duration::from_millis(200);

fn usage(message: impl std::fmt::Display) -> Failure {
    Failure::usage(message)
}

fn out_dir(config: &RunConfig, id: &str) -> Result<PathBuf, Failure> {
    if let Some(dir) = &config.resume {
        return Ok(dir.clone());
    }
    let dir = config
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(id));
    if dir.join(journal::FILE_NAME).exists() {
        return Err(usage(format!(
            "{} already holds a run; pass --resume {0} to continue it, or another --out",
            dir.display()
        )));
    }
    let foreign = std::fs::read_dir(&dir)
        .map(|mut entries| entries.next().is_some())
        .unwrap_or(false);
    if foreign {
        return Err(usage(format!(
            "--out {}: the directory is not empty, and a bundle would overwrite what is there; give a new or empty directory",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The planned successes per required operation, for the progress bars.
fn planned(instances: &[FlowInstance], config: &RunConfig) -> Vec<(Operation, u64)> {
    let plans = u64::from(config.scenario.scenario.data.flight_plans.max(1));
    let count = |op: Operation| -> u64 {
        instances
            .iter()
            .flat_map(|i| i.steps.iter())
            .map(|s| match (s, op) {
                (Step::Quote, Operation::Quote) | (Step::Update { .. }, Operation::Quote) => plans,
                (Step::Subscribe, Operation::Subscription)
                | (Step::Update { .. }, Operation::Update)
                | (Step::Claim { .. }, Operation::Claim) => 1,
                (Step::DeleteQuote, Operation::QuoteDeletion)
                | (Step::ReportFlightCancellation, Operation::FlightCancellation) => 1,
                _ => 0,
            })
            .sum()
    };
    config
        .scenario
        .scenario
        .requirements
        .iter()
        .filter(|r| config.flight_seller || !r.flight_sellers_only)
        .map(|r| (r.operation, count(r.operation).max(u64::from(r.required))))
        .collect()
}

fn run_info(
    config: &RunConfig,
    id: String,
    seed: u64,
    started_at: String,
    base_url: &str,
    token: &Secret,
) -> RunInfo {
    let embedded = matches!(config.target, Target::Embedded);
    RunInfo {
        id,
        started_at,
        finished_at: None,
        scenario: config.scenario.scenario.name.clone(),
        scenario_description: config.scenario.scenario.description.clone(),
        scenario_source: config.scenario.source.to_string(),
        scenario_sha256: config.scenario.sha256.clone(),
        seed,
        complete: false,
        partner: Partner {
            name: config.partner_name.clone(),
            flight_seller: config.flight_seller,
        },
        target: TargetInfo::new(base_url, config.environment(), embedded),
        token_fingerprint: token.fingerprint(),
        concurrency: config.concurrency.get(),
        scale: config.scale.get(),
        notice: embedded.then(|| evidence::SANDBOX_NOTICE.to_string()),
        dialect: config.dialect.clone(),
    }
}

/// Runs the engine until it ends, or until Ctrl-C: then no new step starts, in-flight requests end.
async fn execute(
    shared: Arc<Shared>,
    instances: Vec<FlowInstance>,
    points: std::collections::HashMap<String, engine::ResumePoint>,
) -> (Result<Vec<FlowResult>, String>, bool) {
    let cancel = shared.cancel.clone();
    let engine = tokio::spawn(engine::execute(shared, instances, points));
    tokio::pin!(engine);
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let (joined, interrupted) = tokio::select! {
        joined = &mut engine => (joined, false),
        _ = ctrl_c => {
            crate::tell!("interrupted: no new step starts; letting in-flight requests end, then writing the bundle");
            cancel.cancel();
            ((&mut engine).await, true)
        }
    };
    let results = joined.map_err(|e| {
        crate::tell!("error: the engine stopped unexpectedly: {e}");
        format!("the engine stopped unexpectedly (a bug; please report it): {e}")
    });
    (results, interrupted)
}

pub async fn run(args: RunArgs) -> Result<u8, Failure> {
    let mode = OutputMode::decide(&args.output);
    let (previous, recorded) = match &args.resume {
        Some(dir) => {
            let previous = read_previous(dir)?;
            let recorded = previous.recorded(dir)?;
            (Some(previous), Some(recorded))
        }
        None => (None, None),
    };
    let config = RunConfig::from_args(&args, recorded.as_ref()).map_err(usage)?;
    super::guard::production_guard(&config)?;
    let receiver = match &config.webhooks {
        Some(wanted) => Some(RunReceiver::start(wanted).await?),
        None => None,
    };
    let sandbox_options = SandboxOptions {
        claim_step: EMBEDDED_CLAIM_STEP,
        dialect: super::target::sandbox_dialect(&config.dialect),
        webhooks: receiver.as_ref().and_then(RunReceiver::sandbox_options),
        ..SandboxOptions::default()
    };
    let opened = super::target::open_with(&config.target, sandbox_options).await?;
    let (base_url, token) = (opened.base_url.clone(), opened.token.clone());
    let start = Utc::now();
    let (run, recorded, started, in_flight) = match previous {
        Some(p) => (
            p.continued_run(&base_url, &token),
            (p.exchanges, p.steps),
            p.started,
            p.in_flight,
        ),
        None => (
            new_run(&config, start, &base_url, &token),
            (Vec::new(), Vec::new()),
            Vec::new(),
            Vec::new(),
        ),
    };
    let dir = out_dir(&config, &run.id)?;
    let journal = open_journal(&dir, &config, &run)?;
    if let Some(receiver) = &receiver {
        receiver.write_to(&dir);
    }

    let instances = engine::plan(
        &config.scenario.scenario,
        config.flight_seller,
        config.scale,
    );
    let points = engine::resume_points(&instances, &started, &recorded.1, &recorded.0);
    let progress = Arc::new(Progress::new(
        mode,
        &planned(&instances, &config),
        instances.len(),
    ));
    let recording = Recording::new(journal, recorded, vec![progress.clone()]);
    // Requests a dead run had in flight go on the record before anything new is sent.
    for exchange in in_flight {
        recording
            .events
            .emit(RunEvent::ExchangeFinished(Box::new(exchange)));
    }
    let shared = Arc::new(shared_state(
        &config,
        &run,
        &base_url,
        token,
        recording.events.clone(),
        start,
    )?);
    if mode.progress != crate::output::ProgressMode::Quiet {
        crate::tell!(
            "ppcert run {}: scenario {} against {} ({} flows, concurrency {})",
            run.id,
            run.scenario,
            base_url,
            instances.len(),
            config.concurrency
        );
        if let Some(receiver) = &receiver {
            crate::tell!("webhooks: receiving on {}", receiver.url());
        }
    }
    let (results, interrupted) = execute(shared.clone(), instances, points).await;
    progress.finish();
    let gate = shared.gate.state();
    let (results, engine_error) = match results {
        Ok(results) => (results, None),
        Err(error) => (Vec::new(), Some(error)),
    };
    let mut evidence = finish(
        &config,
        run,
        &recording,
        &results,
        (interrupted, engine_error),
    );
    if let Some(receiver) = receiver {
        let section = receiver
            .finish(opened.sandbox.as_ref(), &evidence.exchanges)
            .await;
        evidence.webhooks = Some(section);
    }
    let published = publish(&dir, &mut evidence, &recording, &config.formats);
    if let Some(sandbox) = opened.sandbox {
        let _ = sandbox.shutdown().await;
    }
    if let Err(error) = &published {
        crate::tell!(
            "error: {error}; the requests were sent and {} holds what was recorded",
            dir.join(journal::FILE_NAME).display()
        );
    }
    let outcome = RunOutcome {
        bundle_written: published.is_ok(),
        interrupted,
        first_call: match gate {
            GateState::TokenRejected => FirstCall::TokenRejected,
            GateState::Unreachable => FirstCall::Unreachable,
            _ => FirstCall::Answered,
        },
        passed: evidence.verdict == evidence::Verdict::Passed,
    };
    explain_first_call(outcome.first_call);
    let code = run_exit_code(&outcome);
    if mode.json {
        crate::say!("{}", crate::output::summary_json(&evidence, &dir, code));
    } else if published.is_ok() {
        crate::say!("{}", crate::output::summary(&mode, &evidence, &dir));
    }
    Ok(code)
}

/// A fresh run record: its id and seed, and the data generator's clock, start here.
fn new_run(config: &RunConfig, start: DateTime<Utc>, base_url: &str, token: &Secret) -> RunInfo {
    let seed = config.seed.unwrap_or_else(rand::random);
    run_info(
        config,
        run_id(start, seed),
        seed,
        start.to_rfc3339_opts(SecondsFormat::Millis, true),
        base_url,
        token,
    )
}

/// Opens the journal and writes its first line: the run itself, or where a resumed run picked up.
fn open_journal(dir: &Path, config: &RunConfig, run: &RunInfo) -> Result<Journal, Failure> {
    let cannot_write = |path: &Path, e: std::io::Error| {
        usage(format!("{}: cannot write the journal: {e}", path.display()))
    };
    let mut journal =
        Journal::open(dir, config.resume.is_some()).map_err(|e| cannot_write(dir, e))?;
    let header = if config.resume.is_some() {
        Line::Resumed {
            at: Utc::now().to_rfc3339(),
        }
    } else {
        Line::Run {
            run: serde_json::to_value(run).unwrap_or_default(),
        }
    };
    journal
        .append(&header)
        .map_err(|e| cannot_write(journal.path(), e))?;
    Ok(journal)
}

/// What every flow shares. Generated data is dated from the run's first start, so a resumed run
/// generates the same data it would have.
fn shared_state(
    config: &RunConfig,
    run: &RunInfo,
    base_url: &str,
    token: Secret,
    events: Arc<engine::EventStream>,
    now: DateTime<Utc>,
) -> Result<Shared, Failure> {
    let run_start = DateTime::parse_from_rfc3339(&run.started_at)
        .map(|at| at.with_timezone(&Utc))
        .unwrap_or(now);
    Ok(Shared {
        client: ApiClient::new(
            base_url,
            token,
            config.timeout,
            config.retries,
            config.backoff,
            config.cacert.as_deref(),
        )
        .map_err(usage)?,
        endpoints: config.endpoints.clone(),
        generator: Generator::new(
            run.seed,
            run.id.clone(),
            run_start,
            config.scenario.scenario.data.clone(),
        ),
        environment: config.environment(),
        events,
        cancel: Cancel::default(),
        gate: Gate::default(),
        concurrency: config.concurrency,
    })
}

/// Ends the journal, then writes the bundle: the journal is complete before the manifest hashes it.
pub(crate) fn publish(
    dir: &Path,
    evidence: &mut Evidence,
    recording: &Recording,
    formats: &[crate::report::Format],
) -> Result<(), String> {
    recording.write_line(&Line::End {
        at: Utc::now().to_rfc3339(),
        complete: evidence.run.complete,
    });
    // Failpoint for the test of a bundle that cannot be written (hidden, tests only).
    let failpoint = crate::env::failpoint("PPCERT_TEST_FAIL_BUNDLE").map(|_| {
        std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            "failpoint PPCERT_TEST_FAIL_BUNDLE",
        )
    });
    failpoint
        .map_or_else(|| crate::report::write_bundle(dir, evidence, formats), Err)
        .map_err(|e| format!("{}: cannot write the bundle: {e}", dir.display()))?;
    if let Err(e) = crate::report::append_step_summary(dir) {
        crate::tell!("warning: cannot append to $GITHUB_STEP_SUMMARY: {e}");
    }
    Ok(())
}

fn finish(
    config: &RunConfig,
    mut run: RunInfo,
    recording: &Recording,
    results: &[FlowResult],
    (interrupted, engine_error): (bool, Option<String>),
) -> Evidence {
    let recorded = recording.take();
    run.finished_at = Some(Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true));
    // A run whose engine died has no flow results: it is incomplete, never a pass.
    run.complete = !interrupted
        && engine_error.is_none()
        && results.iter().all(|r| r.status != FlowStatus::Interrupted);
    let mut warnings: Vec<String> = engine_error.into_iter().collect();
    let weak = match &config.target {
        Target::Remote { token, .. } => !token.scrubbable(),
        Target::Embedded => false,
    };
    if weak {
        warnings.push(format!("the token is shorter than {} characters: it is kept out of headers, but a copy echoed in a body cannot be told apart from text and is not scrubbed", crate::secret::MIN_SCRUBBED_LEN));
    }
    if let Some(error) = recorded.journal_error {
        warnings.push(format!(
            "the journal could not be written completely ({error}); evidence.json holds everything"
        ));
    }
    let mut evidence = evidence::build(
        run,
        &config.scenario.scenario.requirements,
        recorded.exchanges,
        recorded.steps,
        results,
        warnings,
    );
    evidence.archive = recorded.archive;
    evidence
}

fn explain_first_call(first_call: FirstCall) {
    match first_call {
        FirstCall::TokenRejected => {
            crate::tell!("error: the token was rejected (401 on the first call)")
        }
        FirstCall::Unreachable => crate::tell!("error: the target could not be reached"),
        FirstCall::Answered => {}
    }
}

//! `ppcert run`: run a scenario against the target (or the embedded sandbox), record every
//! exchange, and write the evidence bundle.

mod begin;
mod end;

use std::sync::Arc;

use super::run_webhooks::RunReceiver;
use super::target::Opened;
use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::engine;
use crate::error::Failure;
use crate::evidence::resume::{Previous, read_previous};
use crate::output::{OutputMode, ProgressMode};
use begin::{FirstAnswer, Plan, Session};

/// Runs the engine until it ends, or until Ctrl-C: then no new step starts, in-flight requests end.
async fn execute(session: &Session, Plan { instances, points }: Plan) -> end::Ended {
    let (shared, progress) = (session.shared.clone(), &session.progress);
    let cancel = shared.cancel.clone();
    // Listening before the engine starts: a Ctrl-C from here on stops it gracefully, and one
    // that came earlier (kept since `main`'s first instruction) stops it before its first step.
    #[cfg(unix)]
    let mut listening =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
    if crate::ctrl_c::interrupted_early() {
        cancel.cancel(); // no step starts: nothing is sent
    }
    let engine = tokio::spawn(engine::execute(shared, instances, points));
    warm_reports_after_the_first_answer(session.first_answer.clone());
    tokio::pin!(engine);
    let ctrl_c = async {
        if crate::ctrl_c::interrupted_early() {
            return;
        }
        #[cfg(unix)]
        match listening.as_mut() {
            Some(listening) => {
                listening.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let (joined, interrupted) = tokio::select! {
        joined = &mut engine => (joined, false),
        _ = ctrl_c => {
            progress.say("interrupted: no new step starts; letting in-flight requests end, then writing the bundle");
            cancel.cancel();
            ((&mut engine).await, true)
        }
    };
    let results = joined.map_err(|e| {
        crate::console::tell!("error: the engine stopped unexpectedly: {e}");
        format!("the engine stopped unexpectedly (a bug; please report it): {e}")
    });
    end::Ended {
        results,
        interrupted,
    }
}

/// The reports' templates compile while the run goes on, not at its end, and once its first
/// answer is in, not beside its first requests: on two cores the compile took a core from
/// them (BENCHMARKS.md). A run that ends before any answer compiles them at its end.
fn warm_reports_after_the_first_answer(first_answer: Arc<FirstAnswer>) {
    drop(tokio::spawn(async move {
        first_answer.heard().await;
        drop(tokio::task::spawn_blocking(crate::report::warm));
    }));
}

pub(crate) async fn run(args: RunArgs) -> Result<u8, Failure> {
    // Ctrl-C is the run's to handle from here: nothing has been sent yet.
    crate::ctrl_c::graceful();
    let mode = OutputMode::decide(&args.output);
    // The signing key is read before anything is sent: a run must not end unsignable.
    let signer = match &args.sign_key {
        Some(path) => Some(crate::attest::keys::load_signing(path)?),
        None => None,
    };
    let (mut config, previous) = configure(&args)?;
    let baseline = super::baseline::load(args.baseline.as_deref(), args.accept_drift)?;
    if let Some(dossier) = &args.dossier
        && !super::dossier_run::narrow(dossier, &mut config)?
    {
        return Ok(crate::exit_codes::SUCCESS);
    }
    let receiver = match &config.webhooks {
        Some(wanted) => Some(RunReceiver::start(wanted).await?),
        None => None,
    };
    let mut opened = open_target(&config, receiver.as_ref()).await?;
    let tokens = super::target::tokens(&config.staging, &opened.token).await?;
    let (session, plan) = begin::begin(
        &config,
        begin::Connected {
            opened: &opened,
            tokens,
        },
        previous,
        mode,
        receiver.as_ref(),
    )?;
    announce(
        &mode,
        &config,
        &opened.base_url,
        &session,
        &plan,
        receiver.as_ref(),
    );
    let ended = execute(&session, plan).await;
    let sandbox = opened.sandbox.take();
    let dir = session.dir.clone();
    let beside = end::Beside { receiver, sandbox };
    let ending = super::ending::Ending {
        dir: &dir,
        mode: &mode,
        baseline: baseline.as_ref(),
        signer: signer.as_ref(),
        dossier: args.dossier.as_deref(),
    };
    let outcome = end::conclude(&config, session, ended, beside, &ending).await?;
    if outcome == crate::error::Outcome::Interrupted {
        tell_how_to_finish(&args, &config, &dir);
    }
    Ok(outcome.exit_code())
}

/// After an interrupted run, the command that finishes it.
fn tell_how_to_finish(args: &RunArgs, config: &RunConfig, dir: &std::path::Path) {
    match &args.dossier {
        // The narrowed scenario is the dossier's to compute again, not the journal's.
        Some(dossier) => crate::console::tell!(
            "to finish: run with --dossier {} again; it sends only what is still missing",
            shell_word(dossier)
        ),
        None => crate::console::tell!("{}", resume_command(args, config, dir)),
    }
}

/// The exact command that finishes an interrupted run: the recorded target, scenario, seed and
/// scale come back from the journal; the token and config files are not recorded.
fn resume_command(args: &RunArgs, config: &RunConfig, dir: &std::path::Path) -> String {
    let mut command = format!("ppcert run --resume {}", shell_word(dir));
    if let Some(path) = &args.target.config {
        command.push_str(&format!(" --config {}", shell_word(path)));
    }
    if let Some(path) = &args.target.token_file {
        command.push_str(&format!(" --token-file {}", shell_word(path)));
    }
    // The command line of --token-command is not repeated: it may hold a secret.
    let token = if args.target.token_command.is_some() {
        " (with the same --token-command as before)"
    } else if args.target.token_file.is_none()
        && config.staging.file.auth.token_url.is_none()
        && config.staging.file.auth.command.is_none()
        && !config.target.is_embedded()
    {
        " (with the same token in PPCERT_TOKEN)"
    } else {
        ""
    };
    format!("to finish this run: {command}{token}")
}

/// A path as one shell word: quoted when it holds anything but plain path characters.
fn shell_word(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The config, with an interrupted run's record merged in when resuming, past the
/// production guard.
fn configure(args: &RunArgs) -> Result<(RunConfig, Option<Previous>), Failure> {
    let (previous, recorded) = match &args.resume {
        Some(dir) => {
            let previous = read_previous(dir)?;
            let recorded = crate::config::Recorded::of(&previous, dir)?;
            (Some(previous), Some(recorded))
        }
        None => (None, None),
    };
    let config = RunConfig::from_args(args, recorded.as_ref())?;
    if let (Some(previous), Some(dir)) = (&previous, &args.resume) {
        let scenario = &config.scenario.scenario;
        let instances = crate::engine::plan(scenario, config.flight_seller, config.scale);
        let flows = instances.iter().map(|i| (i.label.as_str(), i.steps.len()));
        previous.check_flows(dir, flows)?;
    }
    super::guard::production_guard(&config)?;
    Ok((config, previous))
}

/// The target, or the embedded sandbox speaking the run's dialect (and delivering webhooks
/// to the run's receiver).
async fn open_target(
    config: &RunConfig,
    receiver: Option<&RunReceiver>,
) -> Result<Opened, Failure> {
    let webhooks = receiver.and_then(RunReceiver::sandbox_options);
    super::target::open(&config.target, config.embedded_sandbox(webhooks)).await
}

/// The run's one opening line on stderr (and where webhooks are received), unless quiet.
fn announce(
    mode: &OutputMode,
    config: &RunConfig,
    base_url: &str,
    session: &Session,
    plan: &Plan,
    receiver: Option<&RunReceiver>,
) {
    if mode.progress == ProgressMode::Quiet {
        return;
    }
    // Through the progress display: the bars are drawn already.
    session.progress.say(&format!(
        "ppcert run {}: scenario {} against {} ({} flows, concurrency {})",
        session.run.id,
        session.run.scenario,
        base_url,
        plan.instances.len(),
        config.concurrency
    ));
    if let Some(receiver) = receiver {
        (session.progress).say(&format!("webhooks: receiving on {}", receiver.url()));
    }
}

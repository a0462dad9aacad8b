//! Ending a run: the evidence from what was recorded, then the session's ending (the bundle,
//! the summary, signing, the dossier) and its one outcome.

use super::begin::Session;
use crate::commands::ending::{Ending, Record, Went};
use crate::commands::run_webhooks::RunReceiver;
use crate::config::{RunConfig, Target};
use crate::engine::GateState;
use crate::error::{Failure, FirstCall, Outcome};
use crate::evidence::collect::Recording;
use crate::evidence::{Evidence, RunInfo};
use crate::record::{FlowResult, FlowStatus};
use crate::sandbox::Sandbox;
use crate::timestamp::Timestamp;

/// How the engine ended: its flows' results (or why there are none), and whether Ctrl-C
/// stopped it.
pub(super) struct Ended {
    pub results: Result<Vec<FlowResult>, String>,
    pub interrupted: bool,
}

/// What ran beside the engine and ends with the run: the webhook receiver and the embedded
/// sandbox.
pub(super) struct Beside {
    pub receiver: Option<RunReceiver>,
    pub sandbox: Option<Sandbox>,
}

/// Builds the evidence, and ends the session as `ending` says: its one outcome.
pub(super) async fn conclude(
    config: &RunConfig,
    session: Session,
    Ended {
        results,
        interrupted,
    }: Ended,
    Beside { receiver, sandbox }: Beside,
    ending: &Ending<'_>,
) -> Result<Outcome, Failure> {
    session.progress.finish();
    if session.recording.all_kept_whole() {
        // A small run (its exchanges all kept whole): a few MiB at most, and returning them
        // page by page cost more than the rest of the default batch's end; larger runs return
        // them as before (their peak RSS is a goal).
        crate::allocator::keep_freed_pages();
    }
    let gate = session.shared.gate.state();
    let (results, engine_error) = match results {
        Ok(results) => (results, None),
        Err(error) => (Vec::new(), Some(error)),
    };
    let recording = &session.recording;
    let mut evidence = finish(
        config,
        session.run,
        recording,
        &results,
        interrupted,
        engine_error,
    );
    if !config.target.is_embedded() {
        evidence.token_requests = session.shared.client.tokens().calls();
    }
    if let Some(receiver) = receiver {
        let section = receiver.finish(sandbox.as_ref(), &evidence.exchanges).await;
        evidence.webhooks = Some(section);
    }
    let rendered = session.prerender.map(|p| p.finish());
    let record = Record {
        recording,
        requirements: &config.scenario.scenario.requirements,
        formats: &config.formats,
        rendered: rendered.as_ref(),
    };
    let written = ending.write(&mut evidence, record);
    if let Some(sandbox) = sandbox {
        let _ = sandbox.shutdown().await;
    }
    let first_call = match gate {
        GateState::TokenRejected => FirstCall::TokenRejected,
        GateState::Unreachable => FirstCall::Unreachable,
        GateState::NotTheApi => FirstCall::NotTheApi,
        _ => FirstCall::Answered,
    };
    let went = Went {
        written,
        interrupted,
        first_call,
        suite_failed: None,
    };
    ending.conclude(&evidence, went)
}

fn finish(
    config: &RunConfig,
    mut run: RunInfo,
    recording: &Recording,
    results: &[FlowResult],
    interrupted: bool,
    engine_error: Option<String>,
) -> Evidence {
    let recorded = recording.take();
    run.finished_at = Some(Timestamp::now());
    // A run whose engine died has no flow results: it is incomplete, never a pass.
    run.complete = !interrupted
        && engine_error.is_none()
        && results.iter().all(|r| r.status != FlowStatus::Interrupted);
    let mut warnings: Vec<String> = engine_error.into_iter().collect();
    warnings.extend(config.resume_note.clone());
    let remote = !config.target.is_embedded();
    warnings.extend(crate::config::unnamed_warning(&config.partner_name, remote));
    let weak = match &config.target {
        Target::Remote {
            token: crate::config::TokenSource::Static { token, .. },
            ..
        } => !token.scrubbable(),
        _ => false,
    };
    if weak {
        warnings.push(format!("the token is shorter than {} characters: it is kept out of headers, but a copy echoed in a body cannot be told apart from text and is not scrubbed", crate::secret::MIN_SCRUBBED_LEN));
    }
    recorded.into_evidence(
        run,
        &config.scenario.scenario.requirements,
        results,
        warnings,
    )
}

//! Ending a run: the evidence from what was recorded, the bundle, and the exit code.

use super::begin::Session;
use crate::commands::bundle::publish;
use crate::commands::run_webhooks::RunReceiver;
use crate::config::{RunConfig, Target};
use crate::engine::GateState;
use crate::error::{FirstCall, RunOutcome, run_exit_code};
use crate::evidence::collect::Recording;
use crate::evidence::{self, Evidence, RunInfo};
use crate::journal;
use crate::output::OutputMode;
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

/// Builds the evidence, writes the bundle, says how the run went; the process exit code.
pub(super) async fn conclude(
    config: &RunConfig,
    session: Session,
    Ended {
        results,
        interrupted,
    }: Ended,
    Beside { receiver, sandbox }: Beside,
    mode: &OutputMode,
    baseline: Option<&crate::commands::baseline::Baseline>,
) -> u8 {
    session.progress.finish();
    let gate = session.shared.gate.state();
    let (results, engine_error) = match results {
        Ok(results) => (results, None),
        Err(error) => (Vec::new(), Some(error)),
    };
    let (dir, recording) = (&session.dir, &session.recording);
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
    crate::commands::baseline::attach(dir, &mut evidence, baseline);
    let requirements = &config.scenario.scenario.requirements;
    let published = publish(dir, &mut evidence, recording, requirements, &config.formats);
    if let Some(sandbox) = sandbox {
        let _ = sandbox.shutdown().await;
    }
    if let Err(error) = &published {
        crate::console::tell!(
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
            GateState::NotTheApi => FirstCall::NotTheApi,
            _ => FirstCall::Answered,
        },
        passed: evidence.verdict == evidence::Verdict::Passed,
    };
    explain_first_call(outcome.first_call);
    let code = crate::commands::baseline::exit_code(run_exit_code(&outcome), &evidence);
    if mode.json {
        crate::console::say!("{}", crate::output::summary_json(&evidence, dir, code));
    } else if published.is_ok() {
        crate::console::say!("{}", crate::output::summary(mode, &evidence, dir));
    }
    crate::commands::baseline::tell(&evidence, mode.json);
    code
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

fn explain_first_call(first_call: FirstCall) {
    match first_call {
        FirstCall::TokenRejected => {
            crate::console::tell!(
                "error: the token was rejected (401); the failed exchange above quotes the server"
            )
        }
        FirstCall::Unreachable => crate::console::tell!("error: the target could not be reached"),
        FirstCall::NotTheApi => crate::console::tell!(
            "error: the first call (POST …/quotes) answered 404, so the base URL is not the API root and the run stopped there; check --base-url: it should include the API's path prefix (for example https://staging.example.com/partner-api)"
        ),
        FirstCall::Answered => {}
    }
}

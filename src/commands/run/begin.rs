//! Beginning a run: its record (new, or continued from an interrupted run's journal), its
//! bundle directory and journal, the flow instances and where each picks up, and the state
//! every flow shares.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::commands::bundle::{new_bundle_dir, open_journal};
use crate::commands::run_webhooks::RunReceiver;
use crate::commands::target::Opened;
use crate::config::RunConfig;
use crate::datagen::{Generator, run_id};
use crate::engine::{
    self, Cancel, FlowInstance, Gate, ResumePoint, RunEvent, Shared, Subscriber, Tokens,
};
use crate::error::Failure;
use crate::evidence::collect::Recording;
use crate::evidence::resume::{Journaled, Previous};
use crate::evidence::{self, Partner, RunInfo, TargetInfo};
use crate::models::Operation;
use crate::output::{OutputMode, Progress};
use crate::scenario::Step;
use crate::timestamp::Timestamp;

/// Up to this scale (about 49 exchanges each), a run keeps its exchanges whole in memory, as
/// far as [`Recording::keeping_whole`]'s budget goes, and when all fitted its end keeps the
/// pages it frees until the process exits: the end of a small run (the default batch) is what
/// a user waits for, and its memory is a few MiB at most. Larger runs keep their exchanges
/// slim and return freed pages (their peak RSS is a goal).
const SMALL_RUN_SCALE: u32 = 10;

/// What a run holds from its first journal line to its bundle.
pub(super) struct Session {
    pub run: RunInfo,
    pub dir: PathBuf,
    pub recording: Recording,
    pub progress: Arc<Progress>,
    pub shared: Arc<Shared>,
    /// report.html's exchange blocks, rendered while a small run goes on.
    pub prerender: Option<Arc<crate::report::prerender::Prerender>>,
    pub first_answer: Arc<FirstAnswer>,
}

/// Hears the run's first answer (or a dead run's request put back on the record): what
/// waits until the first request is out, not to take a core from it, starts then.
#[derive(Default)]
pub(super) struct FirstAnswer(tokio::sync::Notify);

impl FirstAnswer {
    /// Resolves once an exchange has been recorded (at once if one was already).
    pub(super) async fn heard(&self) {
        self.0.notified().await;
    }
}

impl Subscriber for FirstAnswer {
    fn on(&self, event: &RunEvent) {
        if let RunEvent::ExchangeFinished(_) = event {
            // Keeps one permit: the waiter, early or late, hears it.
            self.0.notify_one();
        }
    }
}

/// The flow instances to run, and where each picks up.
pub(super) struct Plan {
    pub instances: Vec<FlowInstance>,
    pub points: HashMap<String, ResumePoint>,
}

/// The target a run reached and the token lease it calls it with.
pub(super) struct Connected<'a> {
    pub opened: &'a Opened,
    pub tokens: Arc<Tokens>,
}

/// Opens the run's record and journal and readies the engine; nothing is sent yet.
pub(super) fn begin(
    config: &RunConfig,
    connected: Connected<'_>,
    previous: Option<Previous>,
    mode: OutputMode,
    receiver: Option<&RunReceiver>,
) -> Result<(Session, Plan), Failure> {
    let start = Utc::now();
    let base_url = &connected.opened.base_url;
    let (run, journaled) = record_to_continue(config, previous, start, base_url, &connected.tokens);
    let Journaled {
        exchanges,
        steps,
        started,
        in_flight,
        unsettled,
    } = journaled;
    let dir = out_dir(config, &run.id)?;
    let journal = open_journal(&dir, &run, config.resume.is_some())?;
    if let Some(receiver) = receiver {
        receiver.write_to(&dir);
    }
    let instances = engine::plan(
        &config.scenario.scenario,
        config.flight_seller,
        config.scale,
    );
    let lost = engine::open_lost_calls(&exchanges);
    let points = engine::resume_points(&instances, &started, &steps, &unsettled, &lost);
    let progress = Arc::new(Progress::new(
        mode,
        &planned(&instances, config),
        instances.len(),
    ));
    let small = config.scale.get() <= SMALL_RUN_SCALE;
    // A small run's report.html blocks are rendered while it goes on: its end is what a user
    // waits for, and they were most of it.
    let prerender = (small && config.formats.contains(&crate::report::Format::Html))
        .then(crate::report::prerender::Prerender::start)
        .flatten();
    let first_answer = Arc::new(FirstAnswer::default());
    let mut others: Vec<Arc<dyn Subscriber>> = vec![progress.clone(), first_answer.clone()];
    others.extend(prerender.clone().map(|p| p as Arc<dyn Subscriber>));
    let recording = Recording::new(journal, exchanges, steps, others);
    let recording = if small {
        recording.keeping_whole()
    } else {
        recording
    };
    // Requests a dead run had in flight go on the record before anything new is sent.
    for exchange in in_flight {
        recording
            .events
            .emit(RunEvent::ExchangeFinished(Box::new(exchange)));
    }
    let events = recording.events.clone();
    let shared = shared_state(config, &run, connected, events)?;
    let session = Session {
        run,
        dir,
        recording,
        progress,
        shared: Arc::new(shared),
        prerender,
        first_answer,
    };
    Ok((session, Plan { instances, points }))
}

/// The interrupted run's record and what it holds, or a fresh record holding nothing.
fn record_to_continue(
    config: &RunConfig,
    previous: Option<Previous>,
    start: DateTime<Utc>,
    base_url: &str,
    tokens: &Tokens,
) -> (RunInfo, Journaled) {
    match previous {
        Some(p) => {
            let run = p.continued_run(base_url, tokens.fingerprint(), tokens.describe());
            (run, p.journaled)
        }
        None => (new_run(config, start, base_url, tokens), Default::default()),
    }
}

fn out_dir(config: &RunConfig, id: &str) -> Result<PathBuf, Failure> {
    match &config.resume {
        Some(dir) => Ok(dir.clone()),
        None => new_bundle_dir(config.out.as_deref(), id),
    }
}

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
    started_at: Timestamp,
    base_url: &str,
    tokens: &Tokens,
) -> RunInfo {
    let embedded = config.target.is_embedded();
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
        token_fingerprint: tokens.fingerprint(),
        token_source: (!embedded).then(|| tokens.describe()),
        concurrency: config.concurrency.get(),
        scale: config.scale.get(),
        notice: embedded.then(|| evidence::SANDBOX_NOTICE.to_string()),
        dialect: config.staging.dialect_name().to_string(),
    }
}

/// A fresh run record: its id and seed, and the data generator's clock, start here.
fn new_run(config: &RunConfig, start: DateTime<Utc>, base_url: &str, tokens: &Tokens) -> RunInfo {
    let seed = config.seed.unwrap_or_else(rand::random);
    run_info(
        config,
        run_id(start, seed),
        seed,
        Timestamp::from(start),
        base_url,
        tokens,
    )
}

/// What every flow shares. Generated data is dated from the run's first start, so a resumed run
/// generates the same data it would have.
fn shared_state(
    config: &RunConfig,
    run: &RunInfo,
    Connected { opened, tokens }: Connected<'_>,
    events: Arc<engine::EventStream>,
) -> Result<Shared, Failure> {
    let run_start = run.started_at.as_datetime();
    Ok(Shared {
        client: crate::commands::target::client(
            &config.staging,
            &opened.base_url,
            tokens,
            config.retry_policy(),
        )?,
        endpoints: config.staging.endpoints.clone(),
        generator: Generator::new(
            run.seed,
            run.id.clone(),
            run_start,
            config.scenario.scenario.data.clone(),
        )
        .with_booking_numbers(booking_count(config))
        .map_err(|why| Failure::Pattern {
            key: "data.booking_number_pattern",
            why,
        })?,
        environment: config.environment(),
        events,
        cancel: Cancel::default(),
        gate: Gate::default(),
        concurrency: config.concurrency,
    })
}

/// How many bookings the run makes: one per flow instance.
fn booking_count(config: &RunConfig) -> u64 {
    let repeats: u64 = (config.scenario.scenario.flows.iter())
        .map(|f| u64::from(f.repeat))
        .sum();
    repeats.saturating_mul(u64::from(config.scale.get()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn answered() -> RunEvent {
        RunEvent::ExchangeFinished(Box::new(crate::journal::test_exchange()))
    }

    #[tokio::test]
    async fn the_first_answer_is_heard_whether_it_came_before_or_after_the_wait() {
        let within = |first: Arc<FirstAnswer>| async move {
            tokio::time::timeout(Duration::from_secs(5), first.heard()).await
        };
        // Recorded before anyone waits (a dead run's request put back on the record).
        let early = Arc::new(FirstAnswer::default());
        early.on(&answered());
        assert!(within(early).await.is_ok());
        // Recorded while the reports wait for it.
        let late = Arc::new(FirstAnswer::default());
        let waiting = tokio::spawn(within(late.clone()));
        tokio::task::yield_now().await;
        late.on(&answered());
        assert!(waiting.await.unwrap().is_ok());
    }

    #[tokio::test]
    async fn a_step_started_or_a_request_sending_is_not_an_answer() {
        let first = FirstAnswer::default();
        first.on(&RunEvent::StepStarted {
            flow: "lifecycle#1".into(),
            step_index: 0,
        });
        first.on(&RunEvent::Sending {
            flow: "lifecycle#1".into(),
            step: "quote".into(),
            operation: Operation::Quote,
            method: "POST".into(),
            url: "http://127.0.0.1:1/quotes".into(),
            at: Timestamp::EPOCH,
            attempt: 1,
        });
        let heard = tokio::time::timeout(Duration::from_millis(50), first.heard()).await;
        assert!(heard.is_err(), "nothing was answered yet");
    }
}

//! `ppcert proxy`: configured like `run` (target, dialect and `[endpoints.*]` from
//! `ppcert.toml`, flags beating the file), it forwards the partner's own traffic until Ctrl-C
//! or `--until-met`, then writes the bundle with the partner's traffic as its source.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::Utc;

use super::ending::{Ending, Record, Went};
use crate::cli::ProxyArgs;
use crate::config::{ConfigError, Staging, Target, Upstream, upstream};
use crate::environment::Environment;
use crate::error::{Failure, FirstCall, Outcome};
use crate::evidence::collect::Recording;
use crate::evidence::{self, Partner, RunInfo, TargetInfo};
use crate::proxy::{Proxy, router, routes::Routes, rules::Rules};
use crate::record::{FlowResult, FlowState, FlowStatus};
use crate::scenario::Requirement;
use crate::timestamp::Timestamp;

/// Said in the evidence of every proxy session.
pub(crate) const SOURCE: &str = crate::scenario::PARTNER_TRAFFIC;

struct ProxyConfig {
    target: Upstream,
    /// Dialect, endpoints, timeout and `--cacert` (the upstream reached through a
    /// TLS-inspecting proxy or a private CA), as every command resolves them.
    staging: Staging,
    requirements: Vec<Requirement>,
    flight_seller: bool,
    partner_name: String,
    strict: bool,
    /// `--baseline`'s profile, read before the proxy listens.
    baseline: Option<super::baseline::Baseline>,
    /// `--faults`: the plan, read before the proxy listens.
    faults: Option<Vec<crate::record::fault::FaultRule>>,
    /// `--webhook-forward`: the partner's webhook receiver.
    webhook_forward: Option<String>,
}

fn config(args: &ProxyArgs) -> Result<ProxyConfig, Failure> {
    let staging = Staging::load(&args.target)?;
    let file = &staging.file;
    let target = upstream(&args.target, file).map_err(ConfigError::from)?;
    let certification = crate::scenario::resolve("certification", Path::new("."))?;
    let production = matches!(
        target,
        Target::Remote {
            environment: Environment::Production,
            ..
        }
    );
    let faults = super::proxy_faults::plan(
        args.faults.as_deref(),
        production,
        args.webhook_forward.is_some(),
    )?;
    Ok(ProxyConfig {
        faults,
        webhook_forward: args.webhook_forward.as_ref().map(|u| u.to_string()),
        target,
        requirements: certification.scenario.requirements,
        flight_seller: crate::config::flight_seller(args.no_flight_cancellations, file),
        partner_name: crate::config::partner_name(args.partner_name.as_ref(), file),
        // Against production the proxy only records what is clean: --strict is the default.
        strict: args.strict || production,
        baseline: super::baseline::load(args.baseline.as_deref(), args.accept_drift)?,
        staging,
    })
}

fn run_info(config: &ProxyConfig, base_url: &str, embedded: bool) -> RunInfo {
    let start = Utc::now();
    let seed = rand::random();
    RunInfo {
        id: crate::datagen::run_id(start, seed),
        started_at: Timestamp::from(start),
        finished_at: None,
        scenario: "proxy".into(),
        scenario_description: format!("source: {SOURCE}"),
        scenario_source: crate::scenario::ScenarioSource::Proxy.to_string(),
        scenario_sha256: String::new(),
        seed,
        complete: false,
        partner: Partner {
            name: config.partner_name.clone(),
            flight_seller: config.flight_seller,
        },
        target: TargetInfo::new(base_url, config.target.environment(), embedded),
        token_fingerprint: String::new(),
        token_source: None,
        concurrency: 0,
        scale: 1,
        notice: embedded.then(|| evidence::SANDBOX_NOTICE.to_string()),
        dialect: config.staging.dialect_name().to_string(),
    }
}

pub(crate) async fn proxy(args: ProxyArgs) -> Result<u8, Failure> {
    let config = config(&args)?;
    // A large body's pages serve the next one rather than being faulted in again each time.
    crate::allocator::return_freed_pages_after(100);
    crate::allocator::return_freed_pages_lazily();
    // The signing key is read before anything is forwarded: a session must not end unsignable.
    let signer = (args.sign_key.as_deref())
        .map(crate::attest::keys::load_signing)
        .transpose()?;
    let mode = crate::output::OutputMode::decide(&crate::cli::OutputArgs {
        json: args.json,
        ..Default::default()
    });
    if let Some(dossier) = &args.dossier {
        super::dossier::open(dossier)?; // a dossier that does not verify is refused before the session
    }
    super::listening::check_exposure(
        args.listen,
        args.listen_limits.public,
        "--listen",
        "the proxy (it forwards whatever it receives to the API with the caller's own credentials, and records it)",
    )?;
    let opened = super::target::open(&config.target, config.staging.embedded_sandbox()).await?;
    // Listening first: a proxy that cannot listen leaves no bundle directory or journal behind.
    let (socket, addr) = bind(&args).await?;
    let run = run_info(&config, &opened.base_url, opened.sandbox.is_some());
    let dir = super::bundle::new_bundle_dir(args.out.as_deref(), &run.id)?;
    let journal = super::bundle::open_journal(&dir, &run, false)?;
    // Nothing per exchange in memory: a session may forward requests for hours.
    let recording = Recording::spilling(journal);
    let proxy = proxy_for(&config, &opened.base_url, recording)?;
    let proxy = Arc::new(super::proxy_faults::armed(proxy, config.faults.as_ref()));
    let limits = super::listening::limits(&args.listen_limits, super::listening::PROXY_MAX_BODY);
    let ending = Ending {
        dir: &dir,
        mode: &mode,
        baseline: config.baseline.as_ref(),
        signer: signer.as_ref(),
        dossier: args.dossier.as_deref(),
    };
    if !args.command.is_empty() {
        let listening = Listening {
            socket,
            addr,
            limits,
        };
        let recorded = Recorded {
            config: &config,
            run,
            ending: &ending,
        };
        return with_command(&args, listening, recorded, proxy, opened).await;
    }
    // Listening for Ctrl-C before the address is printed: a client (or a script) that stops
    // the proxy as soon as it reads it must still get a bundle.
    let interrupted = crate::ctrl_c::first_ctrl_c(
        "stopping: finishing requests in flight, then writing the bundle",
    );
    announce(addr, &opened, args.until_met, mode.json);
    if let Err(e) = serve(socket, proxy.clone(), args.until_met, interrupted, limits).await {
        crate::console::tell!("error: the proxy stopped: {e}");
    }
    let outcome = finish(&config, run, &proxy, &ending, opened.sandbox, None, false).await?;
    Ok(outcome.exit_code())
}

/// The proxy's socket, and the address it got (port 0 picks one).
async fn bind(
    args: &ProxyArgs,
) -> Result<(tokio::net::TcpListener, std::net::SocketAddr), Failure> {
    let default = args.listen.to_string() == crate::cli::DEFAULT_LISTEN;
    let listen =
        crate::proxy::command::listen_address(args.listen, default, !args.command.is_empty());
    let cannot_listen = |error| Failure::Listen {
        flag: "--listen",
        addr: listen,
        error,
    };
    let socket = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(cannot_listen)?;
    let addr = socket.local_addr().map_err(cannot_listen)?;
    Ok((socket, addr))
}

/// Where the proxy listens: bound before its bundle directory is made.
struct Listening {
    socket: tokio::net::TcpListener,
    addr: std::net::SocketAddr,
    limits: crate::sandbox::listener::Limits,
}

/// What the session is recorded as, and where.
struct Recorded<'a> {
    config: &'a ProxyConfig,
    run: RunInfo,
    ending: &'a Ending<'a>,
}

/// `proxy -- COMMAND`: the session lasts as long as COMMAND; its failure is the exit code.
async fn with_command(
    args: &ProxyArgs,
    Listening {
        socket,
        addr,
        limits,
    }: Listening,
    Recorded {
        config,
        run,
        ending,
    }: Recorded<'_>,
    proxy: Arc<Proxy>,
    opened: super::target::Opened<()>,
) -> Result<u8, Failure> {
    use crate::proxy::command::{Session, discard, proxy_url, supervise};
    let session = Session {
        command: &args.command,
        url: proxy_url(addr, &opened.base_url),
        sandbox_token: opened.sandbox.as_ref().map(|s| s.token().to_string()),
        until_met: args.until_met,
        stop_when_met: args.stop_command_when_met,
    };
    crate::console::tell!(
        "ppcert proxy listening on {} → {}; running `{}` with PPCERT_PROXY_URL set to it",
        session.url,
        opened.base_url,
        Path::new(&args.command[0]).display()
    );
    let served = proxy.clone();
    let ended = supervise(session, proxy.met_on_the_ledger(), |stop| {
        serve_until(socket, served, limits, stop)
    })
    .await;
    let ended = match ended {
        Ok(ended) => ended,
        Err(failure) => {
            discard(ending.dir);
            if let Some(sandbox) = opened.sandbox {
                let _ = sandbox.shutdown().await;
            }
            return Err(failure.into());
        }
    };
    let mut secrets = crate::evidence::suite::environment_secrets();
    secrets.extend(opened.sandbox.as_ref().map(|s| s.token().to_string()));
    let suite = ended.record(&args.command, &secrets);
    let failed = suite.failed().then(|| (suite.line(), suite.exit_words()));
    let interrupted = ended.interrupted();
    let outcome = finish(
        config,
        run,
        &proxy,
        ending,
        opened.sandbox,
        Some(suite),
        interrupted,
    );
    let exit = outcome.await?.exit_code();
    if let Some((line, words)) = failed {
        crate::console::tell!(
            "exit {exit}: the suite `{line}` failed by itself ({words}; its own exit code, passed on); the verdict above judges only the traffic it sent through the proxy"
        );
    }
    Ok(exit)
}

/// The proxy in front of `base_url`, counting the requirements the partner must meet.
fn proxy_for(config: &ProxyConfig, base_url: &str, recording: Recording) -> Result<Proxy, Failure> {
    let required: BTreeMap<_, _> = config
        .requirements
        .iter()
        .filter(|r| config.flight_seller || !r.flight_sellers_only)
        .map(|r| (r.operation, r.required))
        .collect();
    let environment = config.target.environment();
    let rules = Rules::new(
        crate::dialect::enforced(&config.staging.dialect),
        environment,
    )
    .with_definitions(&config.staging.endpoints);
    // The upstream is reached with the staging's timeout, CA and client certificate.
    let client = config.staging.forwarding_http()?;
    let mut proxy = Proxy::new(
        base_url,
        Routes::new(&config.staging.endpoints),
        rules,
        config.strict,
        client,
        recording,
        required,
    );
    proxy.webhook_forward = config.webhook_forward.clone();
    Ok(proxy)
}

/// Where the partner points its client (stdout, for scripts), and how the session ends.
/// With `--json`, stdout holds the summary object alone: the address goes to stderr.
fn announce(
    addr: std::net::SocketAddr,
    opened: &super::target::Opened<()>,
    until_met: bool,
    json: bool,
) {
    let mut lines = vec![format!(
        "ppcert proxy listening on http://{addr} → {}",
        opened.base_url
    )];
    if let Some(sandbox) = &opened.sandbox {
        // The embedded sandbox's development token, printed on purpose: the partner's client needs it.
        lines.push(format!("token: {}", sandbox.token()));
    }
    for line in lines {
        if json {
            crate::console::tell!("{line}");
        } else {
            crate::console::say!("{line}");
        }
    }
    crate::console::tell!(
        "{}; Ctrl-C writes the bundle",
        if until_met {
            "stops when every requirement is met"
        } else {
            "runs until Ctrl-C"
        }
    );
}

/// Forwards until Ctrl-C, or until every requirement is met with `--until-met`.
async fn serve(
    socket: tokio::net::TcpListener,
    proxy: Arc<Proxy>,
    until_met: bool,
    interrupted: impl std::future::Future<Output = ()> + Send + 'static,
    limits: crate::sandbox::listener::Limits,
) -> std::io::Result<()> {
    let stopper = proxy.clone();
    let stop = async move {
        let met = async {
            if until_met {
                stopper.met_on_the_ledger().await
            } else {
                std::future::pending().await
            }
        };
        tokio::select! {
            _ = interrupted => {}
            _ = met => crate::console::tell!("every requirement is met: writing the bundle"),
        }
    };
    serve_until(socket, proxy, limits, stop).await
}

/// Forwards until `stop` resolves, then lets requests in flight finish, within the listener's
/// limits.
async fn serve_until(
    socket: tokio::net::TcpListener,
    proxy: Arc<Proxy>,
    limits: crate::sandbox::listener::Limits,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    crate::sandbox::listener::serve(socket, router(proxy), limits, stop).await
}

/// Writes the session's bundle and ends it as `ending` says: its one outcome.
async fn finish(
    config: &ProxyConfig,
    mut run: RunInfo,
    proxy: &Proxy,
    ending: &Ending<'_>,
    sandbox: Option<crate::sandbox::Sandbox>,
    suite: Option<crate::evidence::suite::SuiteCommand>,
    interrupted: bool,
) -> Result<Outcome, Failure> {
    // A lost answer the partner's traffic never settled: read what the staging holds.
    proxy.settle_lost().await;
    // A claim counts once its status is known: read what the partner's traffic never showed.
    proxy.confirm_claims().await;
    let recorded = proxy.recording.take();
    run.finished_at = Some(Timestamp::now());
    // Ctrl-C is how a bare proxy session ends; with COMMAND it cuts the partner's suite short.
    run.complete = !interrupted;
    let flows = partner_flows(recorded.flow_labels());
    // The requests no endpoint recognised are counted from the journal, with the rest.
    let remote = !config.target.is_embedded();
    let unnamed = crate::config::unnamed_warning(&config.partner_name, remote);
    let mut evidence = recorded.into_evidence(
        run,
        &config.requirements,
        &flows,
        unnamed.into_iter().collect(),
    );
    super::proxy_faults::grade(ending.dir, &mut evidence);
    let suite_failed = suite
        .as_ref()
        .filter(|s| s.failed())
        .map(|s| s.exit_code_passed_on());
    evidence.command = suite;
    let record = Record {
        recording: &proxy.recording,
        requirements: &config.requirements,
        formats: &crate::report::Format::ALL,
        rendered: None,
    };
    let written = ending.write(&mut evidence, record);
    if let Some(sandbox) = sandbox {
        let _ = sandbox.shutdown().await;
    }
    let went = Went {
        written,
        interrupted,
        first_call: FirstCall::Answered,
        suite_failed,
    };
    ending.conclude(&evidence, went)
}

/// One flow per booking the partner's traffic was attributed to.
fn partner_flows(labels: std::collections::BTreeSet<&str>) -> Vec<FlowResult> {
    labels
        .into_iter()
        .map(|label| FlowResult {
            flow: "partner traffic".into(),
            label: label.to_string(),
            state: FlowState::default(),
            status: FlowStatus::Completed,
            reason: None,
        })
        .collect()
}

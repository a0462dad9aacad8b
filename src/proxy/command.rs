//! Supervising `ppcert proxy -- COMMAND`: the partner's own test suite run through the proxy,
//! so one command and one exit code gate a release on the partner's integration. COMMAND is started directly
//! (no shell), in its own process group, with the proxy's root in its environment; when it
//! exits the proxy stops and the bundle is written. Ctrl-C, or every requirement met with
//! `--stop-command-when-met`, ends it: a signal to its whole group first, SIGKILL after a grace
//! period, so nothing it started keeps talking to a stopped proxy.

use std::ffi::{OsStr, OsString};
use std::future::Future;
use std::io::IsTerminal;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::evidence::suite::{SuiteCommand, SuiteEnd};

/// How long COMMAND has to end after the stop signal before it is killed (as `docker stop`).
const GRACE: Duration = Duration::from_secs(10);
/// How long the proxy lets requests still in flight finish once COMMAND has ended.
const DRAIN: Duration = Duration::from_secs(5);

/// Why COMMAND never ran (nothing was sent): its own error, mapped to the command's exit code
/// in `error.rs` (2, 127, 126), so this room imports nothing above it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandError {
    /// No COMMAND after `--` (2).
    #[error("no COMMAND after --")]
    Missing,
    /// COMMAND was not found (127).
    #[error("cannot run `{program}`: no such file, and no such program on PATH; nothing was sent")]
    NotFound { program: String },
    /// COMMAND was found but could not be started (126).
    #[error("cannot run `{program}`: {error}; nothing was sent")]
    NotStarted {
        program: String,
        #[source]
        error: std::io::Error,
    },
}

/// What COMMAND is told, and what ends it.
pub(crate) struct Session<'a> {
    pub command: &'a [OsString],
    /// The proxy's root, the upstream's path prefix included.
    pub url: String,
    /// The embedded sandbox's development token, exported as `PPCERT_TOKEN`; against a staging
    /// COMMAND brings its own token.
    pub sandbox_token: Option<String>,
    pub until_met: bool,
    pub stop_when_met: bool,
}

/// How COMMAND ended.
pub(crate) enum Ended {
    /// By itself (`None`: its status could not be read).
    Exited(Option<ExitStatus>),
    /// Stopped by ppcert once every requirement was met.
    StoppedWhenMet,
    /// Ctrl-C or SIGTERM reached ppcert, which stopped COMMAND.
    Interrupted,
}

impl Ended {
    pub(crate) fn interrupted(&self) -> bool {
        matches!(self, Ended::Interrupted)
    }
}

impl Ended {
    /// What the evidence records of COMMAND: its arguments with `secrets` (and anything a
    /// flag or `NAME=` says is one) redacted, and how it ended.
    pub(crate) fn record(&self, command: &[OsString], secrets: &[String]) -> SuiteCommand {
        let argv: Vec<String> = (command.iter())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let (ended, status) = match self {
            Ended::Exited(Some(status)) => (SuiteEnd::Exited, Some(status)),
            Ended::Exited(None) => (SuiteEnd::Unknown, None),
            Ended::StoppedWhenMet => (SuiteEnd::StoppedWhenMet, None),
            Ended::Interrupted => (SuiteEnd::Interrupted, None),
        };
        #[cfg(unix)]
        let signal = status.and_then(std::os::unix::process::ExitStatusExt::signal);
        #[cfg(not(unix))]
        let signal = None;
        SuiteCommand {
            argv: crate::evidence::suite::redact(&argv, secrets),
            exit_code: status.and_then(ExitStatus::code),
            signal,
            ended,
        }
    }
}

/// Where the proxy listens: with COMMAND, the default address becomes a free loopback port (two
/// jobs on one machine must not collide); an address given explicitly is kept.
/// `default` says `listen` is `--listen`'s default, not an address given.
pub(crate) fn listen_address(listen: SocketAddr, default: bool, with_command: bool) -> SocketAddr {
    if with_command && default {
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
    } else {
        listen
    }
}

/// The URL COMMAND reaches the proxy at: an unspecified listen address is reached on loopback.
pub(crate) fn proxy_url(addr: SocketAddr, upstream: &str) -> String {
    let mut addr = addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            SocketAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
        });
    }
    let prefix = url::Url::parse(upstream)
        .map(|u| u.path().trim_end_matches('/').to_string())
        .unwrap_or_default();
    format!("http://{addr}{prefix}")
}

/// Serves until COMMAND ends, then stops the proxy; how COMMAND ended, or why it could not start.
pub(crate) async fn supervise<S>(
    session: Session<'_>,
    met: impl Future<Output = ()>,
    serve: impl FnOnce(std::pin::Pin<Box<dyn Future<Output = ()> + Send>>) -> S,
) -> Result<Ended, CommandError>
where
    S: Future<Output = std::io::Result<()>> + Send + 'static,
{
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(Box::pin(async move {
        let _ = stopped.await;
    })));
    let drained = |server: tokio::task::JoinHandle<std::io::Result<()>>| async move {
        let abort = server.abort_handle();
        match tokio::time::timeout(DRAIN, server).await {
            Ok(Ok(Err(e))) => crate::console::tell!("error: the proxy stopped: {e}"),
            Err(_) => {
                crate::console::tell!(
                    "requests still open {} s after COMMAND ended are cut",
                    DRAIN.as_secs()
                );
                abort.abort();
            }
            _ => {}
        }
    };
    let interrupts = Interrupts::listen();
    let mut child = match spawn(&session) {
        Ok(child) => child,
        Err(failure) => {
            let _ = stop.send(());
            drained(server).await;
            return Err(failure);
        }
    };
    let ended = watch(&mut child, interrupts, met, &session).await;
    let _ = stop.send(());
    drained(server).await;
    Ok(ended)
}

/// Starts COMMAND in its own process group with the proxy's URL (and the sandbox's token).
fn spawn(session: &Session<'_>) -> Result<Child, CommandError> {
    let (program, args) = session.command.split_first().ok_or(CommandError::Missing)?;
    let mut command = Command::new(program);
    command
        .args(args)
        .env("PPCERT_PROXY_URL", &session.url)
        .env("PPCERT_BASE_URL", &session.url)
        .kill_on_drop(true);
    if let Some(token) = &session.sandbox_token {
        command.env("PPCERT_TOKEN", token);
    }
    // Its own group lets one signal reach everything it starts; a group that is not the
    // terminal's foreground would be stopped reading the terminal, so it gets no terminal.
    #[cfg(unix)]
    command.process_group(0);
    if std::io::stdin().is_terminal() {
        command.stdin(Stdio::null());
    }
    let child = command.spawn().map_err(|e| not_started(program, e))?;
    #[cfg(unix)]
    if let Group(Some(group)) = Group::of(&child) {
        crate::ctrl_c::kill_on_second_ctrl_c(group);
    }
    Ok(child)
}

fn not_started(program: &OsStr, e: std::io::Error) -> CommandError {
    let program = Path::new(program).display().to_string();
    if e.kind() == std::io::ErrorKind::NotFound {
        CommandError::NotFound { program }
    } else {
        CommandError::NotStarted { program, error: e }
    }
}

/// Waits for COMMAND to end by itself, for Ctrl-C, or (when asked) for every requirement met.
async fn watch(
    child: &mut Child,
    mut interrupts: Interrupts,
    met: impl Future<Output = ()>,
    session: &Session<'_>,
) -> Ended {
    let mut awaiting_met = session.until_met || session.stop_when_met;
    let mut met = std::pin::pin!(met);
    loop {
        tokio::select! {
            status = child.wait() => {
                if let Err(e) = &status {
                    crate::console::tell!("error: cannot read how COMMAND ended: {e}");
                }
                return Ended::Exited(status.ok());
            }
            _ = interrupts.received() => {
                crate::console::tell!("interrupted: stopping COMMAND, then writing the bundle (Ctrl-C again to exit at once)");
                // A second Ctrl-C meanwhile kills the group and exits in the signal handler
                // (`ctrl_c::second_sigint_exits`).
                let group = Group::of(child);
                stop(child, Signal::Interrupt).await;
                // A shell's background jobs ignore SIGINT: what outlived COMMAND goes too.
                group.signal(Signal::Kill);
                return Ended::Interrupted;
            }
            _ = &mut met, if awaiting_met => {
                if session.stop_when_met {
                    crate::console::tell!("every requirement is met: stopping COMMAND, then writing the bundle");
                    let group = Group::of(child);
                    stop(child, Signal::Terminate).await;
                    group.signal(Signal::Kill);
                    return Ended::StoppedWhenMet;
                }
                crate::console::tell!("every requirement is met; COMMAND runs to its end (--stop-command-when-met would end it now)");
                awaiting_met = false;
            }
        }
    }
}

/// Ctrl-C, or SIGTERM (a CI job being cancelled), listened for from before COMMAND starts,
/// so that no signal in between ends ppcert without its bundle.
struct Interrupts {
    #[cfg(unix)]
    signals: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Interrupts {
    fn listen() -> Interrupts {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            crate::ctrl_c::second_sigint_exits();
            let signals = signal(SignalKind::interrupt())
                .and_then(|int| Ok((int, signal(SignalKind::terminate())?)));
            if let Err(e) = &signals {
                crate::console::tell!("warning: cannot listen for Ctrl-C: {e}");
            }
            Interrupts {
                signals: signals.ok(),
            }
        }
        #[cfg(not(unix))]
        Interrupts {}
    }

    async fn received(&mut self) {
        #[cfg(unix)]
        match &mut self.signals {
            Some((int, term)) => {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            }
            None => std::future::pending().await,
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Interrupt,
    Terminate,
    Kill,
}

/// Signals COMMAND's process group, waits up to [`GRACE`], then kills the group.
async fn stop(child: &mut Child, signal: Signal) {
    let group = Group::of(child);
    group.signal(signal);
    #[cfg(not(unix))]
    let _ = child.start_kill();
    if tokio::time::timeout(GRACE, child.wait()).await.is_err() {
        crate::console::tell!(
            "COMMAND did not end within {} s: killing it",
            GRACE.as_secs()
        );
        group.signal(Signal::Kill);
        let _ = child.wait().await;
    }
}

/// COMMAND's process group, named by its leader's pid (it was started with
/// `process_group(0)`): the group outlives its leader, so what COMMAND started can still be
/// reached once COMMAND itself has ended and been reaped.
#[derive(Clone, Copy)]
struct Group(Option<i32>);

impl Group {
    fn of(child: &Child) -> Group {
        Group(child.id().and_then(|pid| i32::try_from(pid).ok()))
    }

    #[cfg(unix)]
    fn signal(self, signal: Signal) {
        let Some(pid) = self.0 else {
            return; // ended and reaped before it was named
        };
        let number = match signal {
            Signal::Interrupt => libc::SIGINT,
            Signal::Terminate => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        // SAFETY: kill(2) takes plain integers; a negative pid names the process group COMMAND
        // leads, which no other process of ours is in. An empty group is ESRCH, harmless.
        unsafe {
            libc::kill(-pid, number);
        }
    }

    #[cfg(not(unix))]
    fn signal(self, _signal: Signal) {
        // Without process groups, COMMAND alone is killed when its handle drops.
    }
}

/// A COMMAND that never started leaves no bundle behind: its journal holds nothing but the
/// header, and the same `--out` must work once the command line is fixed.
pub(crate) fn discard(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(crate::journal::FILE_NAME));
    let _ = std::fs::remove_dir(dir); // only when nothing else is in it
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_keeps_the_upstreams_prefix_and_reaches_an_unspecified_address_on_loopback() {
        let any: SocketAddr = "0.0.0.0:4000".parse().unwrap();
        assert_eq!(
            proxy_url(any, "https://staging.example/partner-api/"),
            "http://127.0.0.1:4000/partner-api"
        );
        let local: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        assert_eq!(
            proxy_url(local, "http://127.0.0.1:9"),
            "http://127.0.0.1:5000"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_failed_command_keeps_its_own_code_and_a_signal_is_128_plus_n() {
        use std::os::unix::process::ExitStatusExt;
        let exited = |code: i32| Ended::Exited(Some(ExitStatus::from_raw(code << 8)));
        let passed_on = |ended: Ended| {
            let suite = ended.record(&["suite".into()], &[]);
            suite.failed().then(|| suite.exit_code_passed_on())
        };
        assert_eq!(passed_on(exited(0)), None, "success: the run decides");
        assert_eq!(passed_on(exited(7)), Some(7), "failure: its own code");
        let killed = Ended::Exited(Some(ExitStatus::from_raw(libc::SIGKILL)));
        assert_eq!(
            killed.record(&["suite".into()], &[]).signal,
            Some(libc::SIGKILL)
        );
        assert_eq!(passed_on(killed), Some(137));
        assert_eq!(passed_on(Ended::StoppedWhenMet), None, "stopped by ppcert");
        assert_eq!(passed_on(Ended::Exited(None)), Some(1));
    }
}

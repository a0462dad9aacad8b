//! What every long-lived listener shares on the command side: its limits from the flags,
//! the `--public` rule for non-loopback addresses, and the two-step Ctrl-C.

use std::net::SocketAddr;
use std::time::Duration;

use crate::cli::ListenArgs;
use crate::error::{Failure, Refusal};
use crate::exit_codes;
use crate::sandbox::listener::{DEFAULT_MAX_BODY, Limits};

/// The proxy's default body limit: it forwards the partner's bodies unchanged, whatever they
/// hold, so it is more generous than the API listeners.
pub(crate) const PROXY_MAX_BODY: usize = 8 << 20;

/// The limits the flags ask for; `max_body` is the listener's own default when not given.
pub(crate) fn limits(args: &ListenArgs, max_body: usize) -> Limits {
    Limits {
        max_body: args.max_body.unwrap_or(max_body),
        header_timeout: Duration::from_secs(args.header_timeout),
        body_timeout: Duration::from_secs(args.body_timeout),
        max_connections: args.max_connections,
        grace: Duration::from_secs(args.shutdown_grace),
    }
}

/// The limits of a listener that has no flags of its own (a run's webhook receiver).
pub(crate) fn default_limits() -> Limits {
    Limits {
        max_body: DEFAULT_MAX_BODY,
        ..Limits::default()
    }
}

/// Loopback is always fine; any other address needs `--public` (`flag` names it as the
/// command spells it), and then a warning says what the network can reach.
pub(crate) fn check_exposure(
    addr: SocketAddr,
    public: bool,
    flag: &str,
    exposed: &str,
) -> Result<(), Failure> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !public {
        return Err(Refusal::NotLoopback {
            flag: flag.to_string(),
            addr,
            exposed: exposed.to_string(),
        }
        .into());
    }
    crate::console::tell!("warning: --public: {exposed} is reachable from the network on {addr}");
    Ok(())
}

/// Listens for Ctrl-C from this call on (call it before the address is printed: a Ctrl-C
/// right after must stop gracefully, not kill the process); the future resolves at the first
/// one. From then on, a second Ctrl-C ends the process at once (exit 130) instead of waiting
/// for the graceful stop.
pub(crate) fn first_ctrl_c(stopping: &'static str) -> impl std::future::Future<Output = ()> + Send {
    #[cfg(unix)]
    let interrupts = {
        second_sigint_exits();
        let signals = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt());
        if let Err(e) = &signals {
            crate::console::tell!("warning: cannot listen for Ctrl-C: {e}");
        }
        signals.ok()
    };
    async move {
        #[cfg(unix)]
        match interrupts {
            Some(mut interrupts) => {
                interrupts.recv().await;
            }
            // No signal handling: run until killed.
            None => std::future::pending::<()>().await,
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        // A runtime slow to get here must not lose a second Ctrl-C sent meanwhile.
        if let Some(ms) = crate::env::failpoint("PPCERT_TEST_SLOW_AFTER_CTRL_C") {
            let ms = ms.to_str().and_then(|ms| ms.parse().ok()).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        crate::console::tell!("{stopping} (Ctrl-C again to exit at once)");
        #[cfg(not(unix))]
        tokio::spawn(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                crate::console::tell!("second Ctrl-C: exiting now");
                std::process::exit(i32::from(exit_codes::INTERRUPTED));
            }
        });
    }
}

/// The process group a second Ctrl-C kills before exiting (`proxy -- COMMAND`'s), 0 for none:
/// exiting at once must not leave COMMAND's processes behind.
#[cfg(unix)]
static KILLED_ON_EXIT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Makes a second Ctrl-C kill process group `group` before it exits.
#[cfg(unix)]
pub(super) fn kill_on_second_ctrl_c(group: i32) {
    KILLED_ON_EXIT.store(group, std::sync::atomic::Ordering::SeqCst);
}

/// Counts SIGINTs in the signal handler itself, registered before the first one: the second
/// exits there and then. Listening for it only once the first had been handled (a new
/// `ctrl_c()` in a task spawned after it) lost a second Ctrl-C that came before that task
/// ran: a quick double press, or any on a loaded machine, left the user waiting out the grace.
#[cfg(unix)]
pub(super) fn second_sigint_exits() {
    use std::sync::Once;
    use std::sync::atomic::{AtomicBool, Ordering};
    static REGISTERED: Once = Once::new();
    static SEEN: AtomicBool = AtomicBool::new(false);
    REGISTERED.call_once(|| {
        let action = || {
            if SEEN.swap(true, Ordering::SeqCst) {
                const SAID: &[u8] = b"second Ctrl-C: exiting now\n";
                let group = KILLED_ON_EXIT.load(Ordering::SeqCst);
                // SAFETY: kill(2), write(2) and _exit(2) are async-signal-safe; nothing else
                // is called. `group` is a process group ppcert started, or 0 (none).
                unsafe {
                    if group > 0 {
                        libc::kill(-group, libc::SIGKILL);
                    }
                    libc::write(2, SAID.as_ptr().cast(), SAID.len());
                    libc::_exit(i32::from(exit_codes::INTERRUPTED));
                }
            }
        };
        // SAFETY: the action only touches an atomic and calls async-signal-safe functions.
        let registered = unsafe { signal_hook_registry::register(libc::SIGINT, action) };
        if let Err(e) = registered {
            crate::console::tell!("warning: a second Ctrl-C will not exit at once: {e}");
        }
    });
}

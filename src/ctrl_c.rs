//! The two-step Ctrl-C of every long-lived command: the first stops gracefully, a second
//! exits at once (exit 130), killing the process group of a `proxy -- COMMAND` first.
//! Process-wide signal handling, so a leaf: the listeners and the proxy's supervisor use it.

use std::time::Duration;

use crate::exit_codes;

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

/// A command that stops gracefully on Ctrl-C has said so ([`graceful`]): a SIGINT from then
/// on is its to handle, and one that came before its own listener was in place is kept in
/// [`EARLY`] for it.
static GRACEFUL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// A SIGINT arrived while a graceful command had not yet listened for it.
static EARLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Called first in `main`: from the process's first instruction a SIGINT is either kept for
/// the command that stops gracefully (`run` writes its journal and bundle) or, for any other
/// command, ends the process as the default action would. Before this, a Ctrl-C in a run's
/// first milliseconds could kill it between its first request and its listener.
pub fn listen_from_start() {
    #[cfg(unix)]
    {
        use std::sync::atomic::Ordering;
        let action = || {
            if GRACEFUL.load(Ordering::SeqCst) {
                EARLY.store(true, Ordering::SeqCst);
            } else {
                // SAFETY: signal(2) and raise(3) are async-signal-safe: the default action,
                // as if no handler had been installed.
                unsafe {
                    libc::signal(libc::SIGINT, libc::SIG_DFL);
                    libc::raise(libc::SIGINT);
                }
            }
        };
        // SAFETY: the action only touches atomics and calls async-signal-safe functions.
        if let Err(e) = unsafe { signal_hook_registry::register(libc::SIGINT, action) } {
            crate::console::tell!("warning: cannot listen for Ctrl-C: {e}");
        }
    }
}

/// The command stops gracefully on Ctrl-C: a SIGINT is now its to handle.
pub(crate) fn graceful() {
    GRACEFUL.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Whether a SIGINT came since [`graceful`] (kept by [`listen_from_start`]'s handler).
pub(crate) fn interrupted_early() -> bool {
    EARLY.load(std::sync::atomic::Ordering::SeqCst)
}

/// The process group a second Ctrl-C kills before exiting (`proxy -- COMMAND`'s), 0 for none:
/// exiting at once must not leave COMMAND's processes behind.
#[cfg(unix)]
static KILLED_ON_EXIT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Makes a second Ctrl-C kill process group `group` before it exits.
#[cfg(unix)]
pub(crate) fn kill_on_second_ctrl_c(group: i32) {
    KILLED_ON_EXIT.store(group, std::sync::atomic::Ordering::SeqCst);
}

/// Counts SIGINTs in the signal handler itself, registered before the first one: the second
/// exits there and then. Listening for it only once the first had been handled (a new
/// `ctrl_c()` in a task spawned after it) lost a second Ctrl-C that came before that task
/// ran: a quick double press, or any on a loaded machine, left the user waiting out the grace.
#[cfg(unix)]
pub(crate) fn second_sigint_exits() {
    use std::sync::Once;
    use std::sync::atomic::{AtomicBool, Ordering};
    static REGISTERED: Once = Once::new();
    static SEEN: AtomicBool = AtomicBool::new(false);
    graceful();
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

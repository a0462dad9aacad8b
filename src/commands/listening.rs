//! What every long-lived listener shares on the command side: its limits from the flags and
//! the `--public` rule for non-loopback addresses (the two-step Ctrl-C is `crate::ctrl_c`).

use std::net::SocketAddr;
use std::time::Duration;

use crate::cli::ListenArgs;
use crate::error::{Failure, Refusal};
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

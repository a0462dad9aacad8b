//! A read repeated until a condition holds: the endpoint's `[endpoints.NAME.wait]` (its
//! `until`, `every` and `timeout`), or the built-in wait for a new booking's contract to be
//! listed. Each unmet poll is recorded as an exchange that never counts; the answer that meets
//! the condition is the call's own. Only a read is repeated: a write is sent once and
//! confirmed (`confirm.rs`).

use std::time::{Duration, Instant};

use super::context::StepContext;
use crate::engine::caller::{CallSpec, Pending};
use crate::engine::http::announced_wait;
use crate::record::Check;

/// How long the built-in contracts read waits for a new booking's contract to be listed
/// when the subscription's answer did not carry its id (docs/flows.md states the bound).
pub(crate) const CONTRACTS_WAIT: Duration = Duration::from_secs(10);
/// How often it asks meanwhile.
pub(crate) const CONTRACTS_EVERY: Duration = Duration::from_millis(500);

/// What a poll waits for, in words for the evidence, and how often and how long.
pub(crate) struct Poll {
    pub condition: String,
    pub every: Duration,
    pub timeout: Duration,
    /// A timeout fails the call (a configured wait); the built-in wait leaves the failure to
    /// the reading that needed the value.
    pub fail_on_timeout: bool,
}

impl StepContext<'_> {
    /// Sends `spec` until `holds` says the answer is the one waited for, or the time is up.
    pub(crate) async fn send_polling<E: std::fmt::Display>(
        &mut self,
        spec: CallSpec,
        poll: Poll,
        holds: impl Fn(&Self, &Pending) -> Result<bool, E>,
    ) -> Pending {
        // Only a read is repeated: a write sent again would be a second write.
        debug_assert!(!spec.operation.is_write(), "{} polled", spec.operation);
        let started = Instant::now();
        let mut polls = 0u32;
        loop {
            let mut pending = self.send_once(spec.clone()).await;
            if !pending.status_ok() || pending.replayed {
                return pending; // the step reports a failed call as any other
            }
            match holds(self, &pending) {
                Ok(true) => {
                    if polls > 0 {
                        let detail = format!("{} held after {polls} poll(s)", poll.condition);
                        pending.checks.push(Check::pass("wait", detail));
                    }
                    return pending;
                }
                Ok(false) => {}
                Err(error) => {
                    pending.checks.push(Check::fail("wait", error.to_string()));
                    return pending;
                }
            }
            let announced =
                (pending.attempt.response.as_ref()).and_then(|r| announced_wait(&r.headers));
            let pause = announced.map_or(poll.every, |a| a.max(poll.every));
            if started.elapsed() + pause > poll.timeout || self.shared.cancel.is_cancelled() {
                let answer = (pending.attempt.response.as_ref())
                    .map(|r| format!("HTTP {}: {}", r.status, r.describe()))
                    .unwrap_or_default();
                let detail = format!(
                    "{} still false after {} s ({polls} poll(s)); last answer {answer}",
                    poll.condition,
                    poll.timeout.as_secs_f32()
                );
                let check = Check::fail("wait", detail);
                pending.checks.push(if poll.fail_on_timeout {
                    check
                } else {
                    check.warning()
                });
                return pending;
            }
            polls += 1;
            pending.poll = true;
            let detail = format!("poll {polls}: {} not yet true", poll.condition);
            pending.checks.push(Check::pass("wait", detail));
            self.finish(pending);
            self.shared.cancel.sleep(pause).await;
        }
    }
}

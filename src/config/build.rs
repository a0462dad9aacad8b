//! What the resolved configuration hands out, built here and nowhere else: the HTTP client
//! (its timeout, TLS roots and client certificate), the retry policy and the embedded
//! sandbox's options. Every command asks for them, so `run`, `probe`, `proxy` and
//! `check-token` cannot drift apart on any of them.

use std::num::NonZeroUsize;
use std::time::Duration;

use super::error::ConfigError;
use super::file::FileConfig;
use super::http::{self, Tls, Use};
use super::staging::Staging;
use crate::sandbox::{SandboxOptions, WebhookOptions};

/// How long a claim stays in each status in the embedded sandbox: short, so runs that await
/// REFUNDED finish in seconds (a standalone `ppcert serve` takes its `--claim-step-ms`).
const EMBEDDED_CLAIM_STEP: Duration = Duration::from_millis(200);

/// Bookings the embedded sandbox of a run keeps per flow in flight, and at least: a run only
/// ever uses the bookings of the flows in flight (at most `concurrency`), so a cap far above
/// that forgets nothing a flow still needs, while `--scale 1000` no longer keeps 10,000
/// finished bookings in the run's own memory. The sandbox's counts are counters and forget
/// nothing.
const EMBEDDED_BOOKINGS_PER_FLOW: usize = 16;
const EMBEDDED_MIN_BOOKINGS: usize = 500;

/// Attempts after the first, when neither `--retries` nor `[run] retries` says.
const DEFAULT_RETRIES: u32 = 3;
/// The first retry's delay, when `--backoff-ms` does not say.
const DEFAULT_BACKOFF: Duration = Duration::from_millis(250);

/// How a call is tried again after a retryable failure: at most `retries` more times, the
/// first after `backoff`, each later one after twice as long (with jitter), unless the
/// server announced its own wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryPolicy {
    pub retries: u32,
    pub backoff: Duration,
}

impl RetryPolicy {
    /// The flags over the file over the defaults; the count within its bounds.
    pub(crate) fn resolve(
        retries: Option<u32>,
        backoff_ms: Option<u64>,
        file: &FileConfig,
    ) -> Result<RetryPolicy, ConfigError> {
        let retries = retries.or(file.run.retries).unwrap_or(DEFAULT_RETRIES);
        crate::bounds::check("retries", i64::from(retries), &crate::bounds::RETRIES)?;
        Ok(RetryPolicy {
            retries,
            backoff: backoff_ms.map_or(DEFAULT_BACKOFF, Duration::from_millis),
        })
    }

    /// The same waits, with at most `retries` retries (a command that is finding out how the
    /// server behaves, not certifying it).
    pub(crate) fn at_most(self, retries: u32) -> RetryPolicy {
        RetryPolicy {
            retries: self.retries.min(retries),
            ..self
        }
    }
}

impl Staging {
    /// The one HTTP client of the staging, for the API and its token endpoint: its request
    /// timeout, its extra root and its client certificate. Built at the first ask, then shared.
    pub(crate) fn http(&self) -> Result<reqwest::Client, ConfigError> {
        if let Some(client) = self.http.get() {
            return Ok(client.clone());
        }
        let client = http::client(Use::Api, Some(self.timeout), self.tls())?;
        Ok(self.http.get_or_init(|| client).clone())
    }

    /// The client the proxy forwards the partner's requests upstream with: the staging's
    /// timeout and TLS, and no user agent of ppcert's.
    pub(crate) fn forwarding_http(&self) -> Result<reqwest::Client, ConfigError> {
        Ok(http::client(
            Use::Anonymous,
            Some(self.timeout),
            self.tls(),
        )?)
    }

    fn tls(&self) -> Tls<'_> {
        Tls {
            cacert: self.cacert.as_deref(),
            identity: self.identity.as_ref(),
        }
    }

    /// The embedded sandbox as every command starts it: speaking the staging's dialect, with
    /// claims moving on quickly.
    pub(crate) fn embedded_sandbox(&self) -> SandboxOptions {
        SandboxOptions {
            claim_step: EMBEDDED_CLAIM_STEP,
            dialect: crate::dialect::enforced(&self.dialect),
            ..SandboxOptions::default()
        }
    }

    /// A run's embedded sandbox: delivering webhooks where the run listens, keeping only the
    /// bookings flows `concurrency` at a time can still use.
    pub(crate) fn run_sandbox(
        &self,
        concurrency: NonZeroUsize,
        webhooks: Option<WebhookOptions>,
    ) -> SandboxOptions {
        SandboxOptions {
            webhooks,
            max_bookings: (concurrency.get())
                .saturating_mul(EMBEDDED_BOOKINGS_PER_FLOW)
                .max(EMBEDDED_MIN_BOOKINGS),
            ..self.embedded_sandbox()
        }
    }
}

/// The client `webhook send` delivers with: no timeout of ours (the receiver's answer is what
/// is graded), the system's roots, redirects not followed.
pub(crate) fn webhook_http() -> Result<reqwest::Client, ConfigError> {
    Ok(http::client(Use::Anonymous, None, Tls::default())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retry_policy_takes_the_flags_then_the_file_then_the_defaults() {
        let empty = super::super::parse_file("p.toml", "").unwrap();
        let file = super::super::parse_file("p.toml", "[run]\nretries = 5\n").unwrap();
        let default = RetryPolicy::resolve(None, None, &empty).unwrap();
        assert_eq!((default.retries, default.backoff), (3, DEFAULT_BACKOFF));
        assert_eq!(RetryPolicy::resolve(None, None, &file).unwrap().retries, 5);
        let flags = RetryPolicy::resolve(Some(1), Some(10), &file).unwrap();
        assert_eq!(
            (flags.retries, flags.backoff),
            (1, Duration::from_millis(10))
        );
        // Narrowed, the waits stay the command's: only the count changes.
        assert_eq!(default.at_most(1).backoff, default.backoff);
        assert_eq!(default.at_most(1).retries, 1);
        assert_eq!(flags.at_most(2).retries, 1);
        assert!(RetryPolicy::resolve(Some(1000), None, &empty).is_err());
    }
}

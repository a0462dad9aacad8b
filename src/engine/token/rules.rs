//! What ppcert accepts from a token source beyond "a token": a lifetime clamped to a sane
//! range whatever number the source sent (1e20, "inf", NaN and negatives never panic), a
//! floor between renewals, and only characters an Authorization header can carry.

use std::time::{Duration, Instant};

use super::error::TokenError;
use crate::record::{TokenOutcome, TokenRequest as TokenCall};
use crate::secret::Secret;
use crate::timestamp::Timestamp;

/// What a source gave: the token and how long it lives, when said.
pub(crate) type Fetched = (Secret, Option<Duration>);

/// The shortest lifetime taken as said; a shorter one (or 0) is read as this.
pub(crate) const MIN_LIFETIME: Duration = Duration::from_secs(1);
/// The longest lifetime taken as said; a longer one (1e20, u64::MAX, "inf") is read as this.
pub(crate) const MAX_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);
/// Before a known expiry, a token is renewed at most once in this long: a source announcing
/// a lifetime of a second does not cost a fetch before nearly every call (a 401 still renews
/// at once).
pub(crate) const RENEWAL_FLOOR: Duration = Duration::from_secs(10);
/// Attempts at one token fetch when the token endpoint answers 429 or 5xx.
pub(crate) const FETCH_ATTEMPTS: u32 = 4;
/// The longest wait between those attempts, whatever `Retry-After` announces.
pub(crate) const MAX_FETCH_WAIT: Duration = Duration::from_secs(30);

/// A lifetime in seconds as a source sent it: `None` when it says nothing usable (NaN, zero
/// or negative: the token is used until the server rejects it), else clamped.
pub(crate) fn lifetime(seconds: f64) -> Option<Duration> {
    if seconds.is_nan() || seconds <= 0.0 {
        return None;
    }
    let clamped = seconds.min(MAX_LIFETIME.as_secs_f64());
    Some(Duration::from_secs_f64(clamped).max(MIN_LIFETIME))
}

/// Why `token` cannot be sent in an Authorization header, if it cannot: visible ASCII only.
pub(crate) fn unsendable(token: &str) -> Option<&'static str> {
    let bad = token.chars().find(|c| !c.is_ascii_graphic())?;
    Some(match bad {
        '\0' => "it holds a NUL character",
        '\r' | '\n' => "it holds a line break (CR or LF)",
        ' ' | '\t' => "it holds a space or a tab",
        c if c.is_control() => "it holds a control character",
        _ => "it holds a character outside visible ASCII",
    })
}

/// The wait before the next attempt at a fetch: what the endpoint announced, else 1, 2, 4 s;
/// never more than [`MAX_FETCH_WAIT`].
pub(crate) fn fetch_wait(attempt: u32, announced: Option<Duration>) -> Duration {
    announced
        .unwrap_or(Duration::from_secs(1 << attempt.min(5)))
        .min(MAX_FETCH_WAIT)
}

/// What is recorded of one call to a token source.
pub(crate) fn call_record(
    at: Timestamp,
    clock: Instant,
    request: String,
    result: &Result<Fetched, TokenError>,
) -> TokenCall {
    TokenCall {
        at,
        request,
        outcome: match result {
            Ok(_) => TokenOutcome::Ok,
            Err(_) => TokenOutcome::Failed,
        },
        duration_ms: clock.elapsed().as_millis() as u64,
        token_fingerprint: result.as_ref().ok().map(|(t, _)| t.fingerprint()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_number_a_source_sends_is_a_lifetime_in_range_or_none() {
        for huge in [1e19, 1e20, f64::INFINITY, u64::MAX as f64, f64::MAX] {
            assert_eq!(lifetime(huge), Some(MAX_LIFETIME), "{huge}");
        }
        for nothing in [f64::NAN, 0.0, -5.0, f64::NEG_INFINITY, -0.0] {
            assert_eq!(lifetime(nothing), None, "{nothing}");
        }
        assert_eq!(lifetime(0.001), Some(MIN_LIFETIME));
        assert_eq!(lifetime(300.0), Some(Duration::from_secs(300)));
    }

    #[test]
    fn only_visible_ascii_can_be_a_bearer_token() {
        assert_eq!(unsendable("eyJhbGciOi.abc-_~+/="), None);
        assert_eq!(unsendable("tok\0en"), Some("it holds a NUL character"));
        assert_eq!(
            unsendable("tok\r\nX-Evil: 1"),
            Some("it holds a line break (CR or LF)")
        );
        assert!(unsendable("tök").is_some() && unsendable("t\u{1b}k").is_some());
    }

    #[test]
    fn waits_between_fetches_are_announced_or_doubling_and_bounded() {
        assert_eq!(fetch_wait(0, None), Duration::from_secs(1));
        assert_eq!(fetch_wait(2, None), Duration::from_secs(4));
        assert_eq!(fetch_wait(0, Some(Duration::ZERO)), Duration::ZERO);
        assert_eq!(
            fetch_wait(0, Some(Duration::from_secs(600))),
            MAX_FETCH_WAIT
        );
    }
}

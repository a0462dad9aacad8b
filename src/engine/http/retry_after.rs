//! How long to wait before retrying a 429 or 503: what the server announced, in whichever of
//! the headers in use it chose (`Retry-After`, `RateLimit-Reset`, `X-RateLimit-Reset`, the
//! `RateLimit` structured field), at most a minute.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::Utc;

/// The longest announced wait honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The wait a 429 or 503 announces: `Retry-After`, else `RateLimit-Reset` or
/// `X-RateLimit-Reset` (delta seconds, or a Unix time when larger than now), else the `t`
/// parameter of a structured `RateLimit` header.
pub(crate) fn announced_wait(headers: &BTreeMap<String, String>) -> Option<Duration> {
    let get = |name: &str| crate::record::header(headers, name);
    if let Some(wait) = get("retry-after").and_then(parse_retry_after) {
        return Some(wait);
    }
    let reset = get("ratelimit-reset")
        .or_else(|| get("x-ratelimit-reset"))
        .or_else(|| {
            get("ratelimit")?
                .split([';', ','])
                .find_map(|part| part.trim().strip_prefix("t="))
        })?;
    parse_reset(reset, Utc::now().timestamp())
}

/// A reset value: delta seconds, or a Unix time in seconds when it is larger than `now`
/// (no delta is that long). Fractions round up, so the retry never comes early.
fn parse_reset(value: &str, now: i64) -> Option<Duration> {
    let seconds: f64 = value
        .trim()
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)?;
    let seconds = seconds.ceil() as i64;
    let delta = if seconds > now {
        seconds - now
    } else {
        seconds
    };
    Some(Duration::from_secs(delta.max(0) as u64).min(MAX_RETRY_AFTER))
}

/// `Retry-After`: delta-seconds or an HTTP date.
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    if let Ok(secs) = value.trim().parse::<u64>() {
        return Some(Duration::from_secs(secs).min(MAX_RETRY_AFTER));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value.trim()).ok()?;
    let wait = (at.with_timezone(&Utc) - Utc::now())
        .to_std()
        .unwrap_or_default();
    Some(wait.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn waits_honour_retry_after_and_rate_limit_resets() {
        let now = Utc::now().timestamp();
        let in_5 = (now + 5).to_string();
        for (pairs, expected) in [
            (vec![("retry-after", "2")], Some(2)),
            (vec![("RateLimit-Reset", "1")], Some(1)),
            (vec![("x-ratelimit-reset", "3")], Some(3)),
            (vec![("x-ratelimit-reset", in_5.as_str())], Some(5)),
            (vec![("ratelimit", "\"default\";r=0;t=4")], Some(4)),
            (
                vec![("retry-after", "1"), ("ratelimit-reset", "9")],
                Some(1),
            ),
            (vec![("ratelimit-reset", "0.2")], Some(1)),
            (vec![("ratelimit-reset", "soon")], None),
            (vec![], None),
        ] {
            let wait = announced_wait(&headers(&pairs)).map(|d| d.as_secs());
            // A Unix time is read against the clock; a second may pass in between.
            let ok = match (wait, expected) {
                (Some(w), Some(e)) => w == e || (e == 5 && w == 4),
                (w, e) => w.is_none() && e.is_none(),
            };
            assert!(ok, "{pairs:?}: {wait:?}");
        }
    }
}

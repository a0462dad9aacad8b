//! One set of bounds for every value a user can set, whichever way they set it (flag,
//! `ppcert.toml`, scenario file): clap's parsers and the file checks both read them here, so
//! `retries = 1000` in a file is refused exactly as `--retries 1000` is.

use std::ops::RangeInclusive;

/// Flows in flight at once.
pub(crate) const CONCURRENCY: RangeInclusive<i64> = 1..=1024;
/// Attempts after the first, for retryable failures.
pub(crate) const RETRIES: RangeInclusive<i64> = 0..=20;
/// Seconds per request.
pub(crate) const TIMEOUT_SECS: RangeInclusive<u64> = 1..=3600;
/// Multiplier of every flow's repeat count.
pub(crate) const SCALE: RangeInclusive<i64> = 1..=10_000;
/// A flow's repeat count in a scenario.
pub(crate) const REPEAT: RangeInclusive<u32> = 1..=10_000;
/// How far ahead the first departure is (the sandbox's calendar reaches some years ahead).
pub(crate) const DAYS_AHEAD: RangeInclusive<u32> = 1..=3_650;
/// Travelers per flight plan.
pub(crate) const TRAVELERS: RangeInclusive<u32> = 1..=50;
/// Flight plans per booking.
pub(crate) const FLIGHT_PLANS: RangeInclusive<u32> = 1..=5;

/// Milliseconds between the polls of an `[endpoints.NAME.wait]`: often enough to follow a
/// staging that settles in a second, rarely enough not to hammer one.
pub(crate) const WAIT_EVERY_MS: RangeInclusive<u64> = 50..=60_000;
/// Milliseconds a wait may last: ten minutes is longer than any staging should take.
pub(crate) const WAIT_TIMEOUT_MS: RangeInclusive<u64> = 100..=600_000;

/// Flow instances in one run (repeats × scale): beyond this a run is a mistake, not a soak.
pub(crate) const FLOW_INSTANCES: RangeInclusive<u64> = 1..=1_000_000;

/// A value outside its bounds: the key it was set by, the value and the bounds. Every bounded
/// value is an integer, so one wide integer holds any of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value} is out of bounds ({start} to {end})")]
pub(crate) struct OutOfBounds {
    pub key: String,
    pub value: i128,
    pub start: i128,
    pub end: i128,
}

/// `Err` naming `key` and the bounds when `value` is outside them.
pub(crate) fn check<T: PartialOrd + Copy + Into<i128>>(
    key: &str,
    value: T,
    range: &RangeInclusive<T>,
) -> Result<(), OutOfBounds> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(OutOfBounds {
            key: key.to_string(),
            value: value.into(),
            start: (*range.start()).into(),
            end: (*range.end()).into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_the_bounds_are_named() {
        assert!(check("run.retries", 20, &RETRIES).is_ok());
        let refused = check("run.retries", 1000, &RETRIES).unwrap_err();
        assert_eq!((refused.value, refused.end), (1000, 20));
        assert_eq!(
            refused.to_string(),
            "run.retries = 1000 is out of bounds (0 to 20)"
        );
        assert!(check("run.concurrency", 0, &CONCURRENCY).is_err());
        assert!(check("data.flight_plans", 6, &FLIGHT_PLANS).is_err());
    }
}

//! One set of bounds for every value a user can set, whichever way they set it (flag,
//! `ppcert.toml`, scenario file): clap's parsers and the file checks both read them here, so
//! `retries = 1000` in a file is refused exactly as `--retries 1000` is.

use std::ops::RangeInclusive;

/// Flows in flight at once.
pub const CONCURRENCY: RangeInclusive<i64> = 1..=1024;
/// Attempts after the first, for retryable failures.
pub const RETRIES: RangeInclusive<i64> = 0..=20;
/// Seconds per request.
pub const TIMEOUT_SECS: RangeInclusive<u64> = 1..=3600;
/// Multiplier of every flow's repeat count.
pub const SCALE: RangeInclusive<i64> = 1..=10_000;
/// A flow's repeat count in a scenario.
pub const REPEAT: RangeInclusive<u32> = 1..=10_000;
/// How far ahead the first departure is (the sandbox's calendar reaches some years ahead).
pub const DAYS_AHEAD: RangeInclusive<u32> = 1..=3_650;
/// Travelers per flight plan.
pub const TRAVELERS: RangeInclusive<u32> = 1..=50;
/// Flight plans per booking.
pub const FLIGHT_PLANS: RangeInclusive<u32> = 1..=5;

/// Flow instances in one run (repeats × scale): beyond this a run is a mistake, not a soak.
pub const FLOW_INSTANCES: RangeInclusive<u64> = 1..=1_000_000;

/// `Err` naming `key` and the bounds when `value` is outside them.
pub fn check<T: PartialOrd + std::fmt::Display + Copy>(
    key: &str,
    value: T,
    range: &RangeInclusive<T>,
) -> Result<(), String> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{key} = {value} is out of bounds ({} to {})",
            range.start(),
            range.end()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_the_bounds_are_named() {
        assert!(check("run.retries", 20, &RETRIES).is_ok());
        assert_eq!(
            check("run.retries", 1000, &RETRIES).unwrap_err(),
            "run.retries = 1000 is out of bounds (0 to 20)"
        );
        assert!(check("run.concurrency", 0, &CONCURRENCY).is_err());
        assert!(check("data.flight_plans", 6, &FLIGHT_PLANS).is_err());
    }
}

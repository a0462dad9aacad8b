//! Booking numbers drawn from a regex (`[data] booking_number_pattern`), for a staging that
//! accepts only its own shape: unique within a run, and the same for the same seed.

use std::collections::HashSet;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A repetition without a bound (`+`, `*`, `{2,}`) is drawn at most this many times.
const MAX_REPEAT: u32 = 16;

/// Draws per number wanted before giving up on finding enough distinct ones.
const TRIES_PER_NUMBER: u64 = 50;

/// The pattern compiled for drawing; anchors are implied (every number matches it whole).
pub(crate) fn compile(pattern: &str) -> Result<rand_regex::Regex, String> {
    let bare = pattern.strip_prefix('^').unwrap_or(pattern);
    let bare = bare.strip_suffix('$').unwrap_or(bare);
    if bare.is_empty() {
        return Err("the pattern is empty".into());
    }
    rand_regex::Regex::compile(bare, MAX_REPEAT).map_err(|e| format!("`{pattern}`: {e}"))
}

/// `count` distinct numbers matching `pattern`, drawn in order from `seed`.
pub(crate) fn draw(pattern: &str, seed: u64, count: u64) -> Result<Vec<String>, String> {
    let regex = compile(pattern)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xB00C_1D5E_ED00_0001);
    let mut seen = HashSet::new();
    let mut numbers = Vec::new();
    let budget = count.saturating_mul(TRIES_PER_NUMBER).max(1_000);
    for _ in 0..budget {
        if numbers.len() as u64 >= count {
            break;
        }
        let number: String = rng.sample(&regex);
        if seen.insert(number.clone()) {
            numbers.push(number);
        }
    }
    if (numbers.len() as u64) < count {
        return Err(format!(
            "`{pattern}` gave only {} distinct booking numbers in {budget} draws; the run needs \
             {count}, one per booking",
            numbers.len()
        ));
    }
    Ok(numbers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_match_the_pattern_are_unique_and_follow_the_seed() {
        let pattern = "[A-Z]{2}[0-9]{8}";
        let whole = regex::Regex::new("^[A-Z]{2}[0-9]{8}$").unwrap();
        let numbers = draw(pattern, 7, 500).unwrap();
        assert!(numbers.iter().all(|n| whole.is_match(n)), "{numbers:?}");
        assert_eq!(numbers.iter().collect::<HashSet<_>>().len(), 500);
        assert_eq!(
            draw(pattern, 7, 500).unwrap(),
            numbers,
            "same seed, same numbers"
        );
        assert_ne!(
            draw(pattern, 8, 5).unwrap(),
            numbers[..5],
            "another seed, others"
        );
        assert_eq!(draw("^AB[0-9]{3}$", 1, 3).unwrap()[0].len(), 5);
    }

    #[test]
    fn a_broken_or_too_narrow_pattern_is_refused() {
        assert!(draw("[A-Z", 1, 1).unwrap_err().contains("`[A-Z`"));
        let narrow = draw("[AB][0-9]", 1, 30).unwrap_err();
        assert!(narrow.contains("only 20 distinct"), "{narrow}");
        assert!(compile("^$").is_err());
    }
}

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
/// Refused before anything is drawn: a pattern whose numbers can be longer than
/// [`BOOKING_NUMBER_CHARS`](crate::bounds::BOOKING_NUMBER_CHARS) or hold a control character.
pub(crate) fn compile(pattern: &str) -> Result<rand_regex::Regex, String> {
    parse(pattern).map(|(regex, _)| regex)
}

/// A regex syntax error in one line (its own text draws the pattern and a caret on three):
/// what is wrong and at which character of the pattern as given to the parser.
fn syntax_error(error: &regex_syntax::Error) -> String {
    let text = error.to_string();
    let what = (text.lines().last().unwrap_or_default())
        .trim_start_matches("error: ")
        .to_string();
    let column = match error {
        regex_syntax::Error::Parse(e) => Some(e.span().start.column),
        regex_syntax::Error::Translate(e) => Some(e.span().start.column),
        _ => None,
    };
    match column {
        Some(column) => format!("{what} (at character {column})"),
        None => what,
    }
}

/// [`compile`], with how many distinct numbers the pattern has at most.
fn parse(pattern: &str) -> Result<(rand_regex::Regex, u128), String> {
    let bare = pattern.strip_prefix('^').unwrap_or(pattern);
    let bare = bare.strip_suffix('$').unwrap_or(bare);
    if bare.is_empty() {
        return Err("the pattern is empty".into());
    }
    let shown = crate::console::printable(pattern);
    let hir = (regex_syntax::Parser::new().parse(bare))
        .map_err(|e| format!("`{shown}`: {}", syntax_error(&e)))?;
    let reach = super::pattern::reach(&hir, MAX_REPEAT);
    let bound = crate::bounds::BOOKING_NUMBER_CHARS;
    if reach.longest > bound {
        return Err(format!(
            "`{shown}` can give booking numbers of {} characters; ppcert's bound is {bound} \
             (a `*`, `+` or `{{n,}}` counts as at most {MAX_REPEAT} more)",
            reach.longest
        ));
    }
    if reach.control {
        return Err(format!(
            "`{shown}` can give a control character (U+0000-U+001F, U+007F-U+009F; `.` \
             includes them): use a class of the characters the staging accepts, e.g. `[A-Z0-9]`"
        ));
    }
    let regex =
        rand_regex::Regex::with_hir(hir, MAX_REPEAT).map_err(|e| format!("`{shown}`: {e}"))?;
    Ok((regex, reach.distinct))
}

/// `count` distinct numbers matching `pattern`, drawn in order from `seed`.
pub(crate) fn draw(pattern: &str, seed: u64, count: u64) -> Result<Vec<String>, String> {
    let (regex, distinct) = parse(pattern)?;
    if distinct < u128::from(count) {
        return Err(format!(
            "`{}` gives at most {distinct} distinct booking numbers; the run needs {count}, \
             one per booking",
            crate::console::printable(pattern)
        ));
    }
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
    fn a_pattern_that_does_not_parse_is_said_in_one_line() {
        let why = draw("[A-Z]{2", 0, 1).unwrap_err();
        assert!(!why.contains('\n'), "{why}");
        assert!(why.contains("unclosed counted repetition"), "{why}");
    }

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
        assert!(narrow.contains("at most 20 distinct"), "{narrow}");
        let overlapping = draw("A|AB?", 1, 3).unwrap_err();
        assert!(overlapping.contains("only 2 distinct"), "{overlapping}");
        assert!(compile("^$").is_err());
    }

    #[test]
    fn a_pattern_too_long_or_with_controls_is_refused_before_drawing() {
        let bomb = std::time::Instant::now();
        let long = draw("[A-Z]{100000000}", 1, 1).unwrap_err();
        assert!(
            long.contains("of 100000000 characters; ppcert's bound is 64"),
            "{long}"
        );
        assert!(bomb.elapsed() < std::time::Duration::from_secs(5));
        assert!(compile("[A-Z]{64}").is_ok());
        assert!(
            compile("[A-Z]{50}[0-9]+")
                .unwrap_err()
                .contains("of 67 characters")
        );
        let control = compile("AB[\\x00-\\x1f]").unwrap_err();
        assert!(control.contains("control character"), "{control}");
        assert!(compile("A.B").unwrap_err().contains("control character"));
        assert!(compile("(?-u:[\\x80-\\xff])").is_err(), "not UTF-8 text");
    }
}

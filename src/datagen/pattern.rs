//! What a booking-number pattern can give, worked out from its syntax before anything is
//! drawn: its longest number, whether a control character can appear, and how many distinct numbers it has at most. `[A-Z]{100000000}` is refused here in
//! microseconds instead of being drawn for minutes.

use regex_syntax::hir::{Class, Hir, HirKind};

/// What a pattern can give (repetitions without a bound counted at the drawing's cap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reach {
    /// Characters of its longest number.
    pub longest: u64,
    /// Distinct numbers at most (saturating; alternatives may overlap).
    pub distinct: u128,
    /// Whether a control character (C0, DEL or C1) can appear.
    pub control: bool,
}

impl Reach {
    const NOTHING: Reach = Reach {
        longest: 0,
        distinct: 1,
        control: false,
    };
}

fn is_control(c: u32) -> bool {
    c <= 0x1F || (0x7F..=0x9F).contains(&c)
}

/// Whether a range of code points (or bytes) meets a control character.
fn meets_control(start: u32, end: u32) -> bool {
    start <= 0x1F || (start <= 0x9F && end >= 0x7F)
}

/// The reach of `hir`, with `max_repeat` extra repeats for `*`, `+` and `{n,}`.
pub(super) fn reach(hir: &Hir, max_repeat: u32) -> Reach {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Reach::NOTHING,
        HirKind::Literal(literal) => {
            let text = String::from_utf8_lossy(&literal.0);
            Reach {
                longest: text.chars().count() as u64,
                control: text.chars().any(|c| is_control(c as u32)),
                ..Reach::NOTHING
            }
        }
        HirKind::Class(Class::Unicode(class)) => {
            let ranges = class.ranges().iter();
            let spans = ranges.map(|r| (u32::from(r.start()), u32::from(r.end())));
            class_reach(spans)
        }
        HirKind::Class(Class::Bytes(class)) => {
            let ranges = class.ranges().iter();
            let spans = ranges.map(|r| (u32::from(r.start()), u32::from(r.end())));
            class_reach(spans)
        }
        HirKind::Capture(capture) => reach(&capture.sub, max_repeat),
        HirKind::Repetition(rep) => {
            let upper = rep.max.unwrap_or(rep.min.saturating_add(max_repeat));
            repeated(reach(&rep.sub, max_repeat), rep.min, upper)
        }
        HirKind::Concat(parts) => parts.iter().fold(Reach::NOTHING, |all, part| {
            let one = reach(part, max_repeat);
            Reach {
                longest: all.longest.saturating_add(one.longest),
                distinct: all.distinct.saturating_mul(one.distinct),
                control: all.control || one.control,
            }
        }),
        HirKind::Alternation(choices) => {
            let none = Reach {
                distinct: 0,
                ..Reach::NOTHING
            };
            choices.iter().fold(none, |all, choice| {
                let one = reach(choice, max_repeat);
                Reach {
                    longest: all.longest.max(one.longest),
                    distinct: all.distinct.saturating_add(one.distinct),
                    control: all.control || one.control,
                }
            })
        }
    }
}

/// One character drawn from the spans (of code points, or of bytes in ASCII: the parser refuses
/// a class that is not UTF-8 text).
fn class_reach(spans: impl Iterator<Item = (u32, u32)>) -> Reach {
    let mut reach = Reach {
        longest: 1,
        distinct: 0,
        ..Reach::NOTHING
    };
    for (start, end) in spans {
        reach.distinct += u128::from(end - start + 1);
        reach.control |= meets_control(start, end);
    }
    reach
}

/// `one` repeated `min..=max` times.
fn repeated(one: Reach, min: u32, max: u32) -> Reach {
    let distinct = if max == 0 {
        1
    } else if one.distinct <= 1 {
        // Each count gives one number (of its own length when the part is not empty).
        if one.longest == 0 {
            one.distinct
        } else {
            u128::from(max - min + 1) * one.distinct
        }
    } else {
        // Σ d^k for k in min..=max; at least 2^k, so a handful of terms saturates.
        let mut sum: u128 = 0;
        for k in min..=max {
            let term = one.distinct.checked_pow(k).unwrap_or(u128::MAX);
            sum = sum.saturating_add(term);
            if sum == u128::MAX {
                break;
            }
        }
        sum
    };
    Reach {
        longest: one.longest.saturating_mul(u64::from(max)),
        distinct,
        control: max > 0 && one.control,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pattern: &str) -> Reach {
        reach(&regex_syntax::Parser::new().parse(pattern).unwrap(), 16)
    }

    #[test]
    fn length_distinct_numbers_and_controls_follow_the_syntax() {
        let plain = of("[A-Z]{2}[0-9]{8}");
        assert_eq!((plain.longest, plain.distinct), (10, 676 * 100_000_000));
        assert!(!plain.control);
        assert_eq!(of("[AB][0-9]").distinct, 20);
        assert_eq!(of("AB|CD|E").distinct, 3);
        assert_eq!(of("AB|CD|E").longest, 2);
        assert_eq!(of("X[0-9]?").distinct, 11);
        assert_eq!(of("[A-Z]+").longest, 17, "one and the drawing's 16 more");
        assert_eq!(of("[A-Z]{100000000}").longest, 100_000_000);
        assert_eq!(of("[A-Z]{100000000}").distinct, u128::MAX);
        assert_eq!(of("A{0}").distinct, 1);
        for control in ["A\\x00", "[\\t-z]", ".", "\\x7f", "[\\u{85}]", "(?s:.)"] {
            assert!(of(control).control, "{control}");
        }
        assert!(!of("[\\x20-\\x7e]").control);
    }
}

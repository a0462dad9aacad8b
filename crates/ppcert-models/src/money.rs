//! Money as ISO 4217 defines it: which codes exist (every active code, from a maintained
//! list rather than one of our own), how many minor units each has (0 for JPY, 3 for KWD),
//! and amounts rounded and shown in them.

use iso_currency::{Currency, IntoEnumIterator};
use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::{Decimal, RoundingStrategy};

/// Whether `code` is an active ISO 4217 currency code, upper case as the standard writes it.
pub fn is_currency(code: &str) -> bool {
    code.len() == 3
        && code.bytes().all(|b| b.is_ascii_uppercase())
        && Currency::from_code(code).is_some()
}

/// Every active ISO 4217 code, in alphabetical order.
pub fn currency_codes() -> Vec<&'static str> {
    let mut codes: Vec<&'static str> = Currency::iter().map(|c| c.code()).collect();
    codes.sort_unstable();
    codes
}

/// Digits after the decimal point of `code`'s amounts; 2 for an unknown code or one without
/// minor units (precious metals), the most common case.
pub fn minor_units(code: &str) -> u32 {
    Currency::from_code(code)
        .and_then(|c| c.exponent())
        .map_or(2, u32::from)
}

/// `amount` rounded half away from zero to `code`'s minor units, computed in decimal so that
/// 0.1 + 0.2 stays 0.30.
pub fn round(amount: f64, code: &str) -> f64 {
    Decimal::from_f64(amount)
        .map(|d| {
            d.round_dp_with_strategy(minor_units(code), RoundingStrategy::MidpointAwayFromZero)
        })
        .and_then(|d| d.to_f64())
        .unwrap_or(amount)
}

/// `amount` as money is written: `74.90`, `1200` (JPY), `3.125` (KWD).
pub fn format(amount: f64, code: &str) -> String {
    let units = minor_units(code) as usize;
    match Decimal::from_f64(amount) {
        Some(d) => {
            let rounded =
                d.round_dp_with_strategy(units as u32, RoundingStrategy::MidpointAwayFromZero);
            format!("{rounded:.units$}")
        }
        None => format!("{amount:.units$}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_iso_4217_with_their_minor_units() {
        for code in ["KES", "PHP", "EGP", "EUR", "JPY", "KWD"] {
            assert!(is_currency(code), "{code}");
        }
        for code in ["EURO", "eur", "XYZ", ""] {
            assert!(!is_currency(code), "{code}");
        }
        assert!(currency_codes().len() > 150);
        assert_eq!(
            (minor_units("JPY"), minor_units("EUR"), minor_units("KWD")),
            (0, 2, 3)
        );
        assert_eq!(round(74.899_999, "EUR"), 74.9);
        assert_eq!(round(1234.5, "JPY"), 1235.0);
        assert_eq!(round(1.2345, "KWD"), 1.235);
        assert_eq!(format(74.9, "EUR"), "74.90");
        assert_eq!(format(1200.0, "JPY"), "1200");
        assert_eq!(format(3.1, "KWD"), "3.100");
        assert_eq!(format(-2.5, "EUR"), "-2.50");
    }
}

//! Amounts of money read exactly, in every shape an API commonly writes them: a JSON number,
//! a decimal string, `{amount|value, currency}` and Google's `{currencyCode, units, nanos}`.
//! Decimals, never floats: 10.77 written as units 10 and nanos 770000000 reads as 10.77.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::{Map, Value};

pub(crate) use super::money_error::{MoneyError, UnreadableDelta};

/// An amount, with its currency when the value named one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Money {
    pub amount: Decimal,
    pub currency: Option<String>,
}

/// Which shape the amount was written in (for the evidence's notes).
pub(crate) type Shape = &'static str;

/// The sign of `amount` as -1, 0 or 1 (what a sign check needs, with no rounding).
pub(crate) fn signum(amount: Decimal) -> f64 {
    if amount.is_zero() {
        0.0
    } else if amount.is_sign_negative() {
        -1.0
    } else {
        1.0
    }
}

/// The nearest float, for records that hold amounts as JSON numbers.
pub(crate) fn to_f64(amount: Decimal) -> f64 {
    rust_decimal::prelude::ToPrimitive::to_f64(&amount).unwrap_or(f64::NAN)
}

/// Nanos per unit in Google's money type.
const NANOS_PER_UNIT: i64 = 1_000_000_000;

/// Reads `value` as money, or says what shape it was and which ones are understood.
pub(crate) fn read(value: &Value) -> Result<(Money, Shape), MoneyError> {
    let bare = |amount| Money {
        amount,
        currency: None,
    };
    match value {
        Value::Number(_) => decimal(value).map(|d| (bare(d), "number")),
        Value::String(text) => parse_decimal(text)
            .map(|d| (bare(d), "decimal string"))
            .ok_or_else(|| MoneyError::NotDecimal {
                key: None,
                text: excerpt(text),
            }),
        Value::Object(map) if map.contains_key("units") || map.contains_key("nanos") => {
            units_and_nanos(map).map(|money| (money, "{currencyCode, units, nanos}"))
        }
        Value::Object(map) => {
            let (key, amount) = ["amount", "value"]
                .iter()
                .find_map(|key| map.get(*key).map(|v| (*key, v)))
                .ok_or_else(|| unknown(value))?;
            let amount = match amount {
                Value::Number(_) => decimal(amount)?,
                Value::String(text) => {
                    parse_decimal(text).ok_or_else(|| MoneyError::NotDecimal {
                        key: Some(key),
                        text: excerpt(text),
                    })?
                }
                other => {
                    let kind = kind(other);
                    return Err(MoneyError::NotAnAmount { key, kind });
                }
            };
            let currency = text_of(map, &["currency", "currencyCode"]);
            let shape = if key == "amount" {
                "{amount, currency}"
            } else {
                "{value, currency}"
            };
            Ok((Money { amount, currency }, shape))
        }
        other => Err(unknown(other)),
    }
}

/// Google's money (`google.type.Money`): whole `units` (an int64, often a JSON string) and
/// `nanos` (-999,999,999..=999,999,999, the same sign as `units`).
fn units_and_nanos(map: &Map<String, Value>) -> Result<Money, MoneyError> {
    let integer = |key: &'static str| -> Result<i64, MoneyError> {
        let not_whole = |found| MoneyError::NotWhole { key, found };
        match map.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(Value::Number(n)) => n.as_i64().ok_or_else(|| not_whole(n.to_string())),
            Some(Value::String(s)) => {
                (s.trim().parse::<i64>()).map_err(|_| not_whole(format!("`{}`", excerpt(s))))
            }
            Some(other) => Err(MoneyError::NotWholeKind {
                key,
                kind: kind(other),
            }),
        }
    };
    let (units, nanos) = (integer("units")?, integer("nanos")?);
    if nanos.abs() >= NANOS_PER_UNIT {
        return Err(MoneyError::NanosOutOfRange { nanos });
    }
    if (units > 0 && nanos < 0) || (units < 0 && nanos > 0) {
        return Err(MoneyError::MixedSigns { units, nanos });
    }
    let amount = Decimal::from(units) + Decimal::new(nanos, 9);
    Ok(Money {
        amount: amount.normalize(),
        currency: text_of(map, &["currencyCode", "currency"]),
    })
}

/// A JSON number as the decimal its text spells (never through a float).
fn decimal(value: &Value) -> Result<Decimal, MoneyError> {
    let text = value.to_string();
    parse_decimal(&text)
        .or_else(|| Decimal::from_scientific(&text).ok())
        .ok_or(MoneyError::OutOfRange { text })
}

fn parse_decimal(text: &str) -> Option<Decimal> {
    let text = text.trim();
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    let plain = !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.chars().filter(|c| *c == '.').count() <= 1
        && digits.chars().any(|c| c.is_ascii_digit());
    plain.then(|| Decimal::from_str(text).ok()).flatten()
}

fn text_of(map: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|key| map.get(*key).and_then(Value::as_str))
        .map(str::to_string)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The error for a shape no rule reads, naming it.
fn unknown(value: &Value) -> MoneyError {
    let shape = match value {
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().map(String::as_str).take(8).collect();
            format!("an object with keys {{{}}}", keys.join(", "))
        }
        other => kind(other).to_string(),
    };
    MoneyError::UnknownShape { shape }
}

fn excerpt(text: &str) -> String {
    let end = text.floor_char_boundary(40);
    text[..end].escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn amount(value: Value) -> String {
        read(&value).unwrap().0.amount.to_string()
    }

    #[test]
    fn every_common_shape_reads_exactly() {
        assert_eq!(amount(json!(10.77)), "10.77");
        assert_eq!(amount(json!(-3)), "-3");
        assert_eq!(amount(json!("12.50")), "12.50");
        assert_eq!(amount(json!({"amount": 4.1, "currency": "EUR"})), "4.1");
        assert_eq!(amount(json!({"value": "-2.5", "currency": "EUR"})), "-2.5");
        let google = json!({"currencyCode": "EUR", "units": "10", "nanos": 770_000_000});
        let (money, shape) = read(&google).unwrap();
        assert_eq!(money.amount, Decimal::new(1077, 2), "10.77, not 10");
        assert_eq!(money.currency.as_deref(), Some("EUR"));
        assert_eq!(shape, "{currencyCode, units, nanos}");
        let negative = json!({"currencyCode": "EUR", "units": -1, "nanos": -750_000_000});
        assert_eq!(amount(negative), "-1.75");
        assert_eq!(
            amount(json!({"currencyCode": "EUR", "nanos": 5})),
            "0.000000005"
        );
        // Sums stay exact where floats would not.
        let sum = read(&json!(0.1)).unwrap().0.amount + read(&json!(0.2)).unwrap().0.amount;
        assert_eq!(sum.to_string(), "0.3");
    }

    #[test]
    fn an_unknown_or_broken_shape_is_an_error_naming_it_never_a_truncated_value() {
        let error = read(&json!({"cents": 1077, "cur": "EUR"}))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("unknown money shape: an object with keys {cents, cur}"),
            "{error}"
        );
        assert!(
            read(&json!([1, 2]))
                .unwrap_err()
                .to_string()
                .contains("an array")
        );
        assert!(read(&json!("a lot")).is_err());
        assert!(read(&json!("1e3x")).is_err());
        let mixed = json!({"units": 1, "nanos": -5});
        assert!(
            read(&mixed)
                .unwrap_err()
                .to_string()
                .contains("different signs")
        );
        let overflow = json!({"units": 1, "nanos": 1_000_000_000});
        assert!(read(&overflow).unwrap_err().to_string().contains("outside"));
        assert!(
            read(&json!({"units": 1.5}))
                .unwrap_err()
                .to_string()
                .contains("whole number")
        );
        assert!(
            read(&json!({"amount": true}))
                .unwrap_err()
                .to_string()
                .contains("a boolean")
        );
    }
}

//! Why an amount of money could not be read, as a type: each variant keeps what was found (the
//! key, the text or the kind of value) and says it in the words the evidence has always shown.

/// An amount refused by [`super::money::read`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MoneyError {
    /// A string that is no plain decimal: bare (`key` `None`) or under `amount`/`value`.
    #[error("{}`{text}` is not a decimal amount", key.map(|k| format!("{k} ")).unwrap_or_default())]
    NotDecimal {
        key: Option<&'static str>,
        text: String,
    },
    /// `amount` or `value` holding neither a number nor a string.
    #[error("{key} is {kind}, not an amount")]
    NotAnAmount {
        key: &'static str,
        kind: &'static str,
    },
    /// `units` or `nanos` that is no whole number: `found` as the answer wrote it (a
    /// string quoted in backticks).
    #[error("{key} {found} is not a whole number")]
    NotWhole { key: &'static str, found: String },
    /// `units` or `nanos` holding neither a number nor a string.
    #[error("{key} is {kind}, not a whole number")]
    NotWholeKind {
        key: &'static str,
        kind: &'static str,
    },
    #[error("nanos {nanos} is outside ±999999999")]
    NanosOutOfRange { nanos: i64 },
    #[error("units {units} and nanos {nanos} have different signs")]
    MixedSigns { units: i64, nanos: i64 },
    /// A number past the range of exact decimal amounts (28 digits).
    #[error("{text} is out of range for an amount")]
    OutOfRange { text: String },
    /// A shape no rule reads: `shape` names it (`an object with keys {cents, cur}`).
    #[error(
        "unknown money shape: {shape}; ppcert reads a number, a decimal string, \
         {{amount|value, currency}} or {{currencyCode, units, nanos}}"
    )]
    UnknownShape { shape: String },
}

/// A `priceDelta` that could not be read as money.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("priceDelta is unreadable: {0}")]
pub(crate) struct UnreadableDelta(#[source] pub MoneyError);

#[cfg(test)]
mod tests {
    use super::super::money::read;
    use super::*;
    use serde_json::json;

    #[test]
    fn an_amount_past_the_decimal_range_is_refused_naming_it() {
        let error = read(&json!(1e40)).unwrap_err();
        assert_eq!(
            error,
            MoneyError::OutOfRange {
                text: "1e+40".into()
            }
        );
        assert_eq!(error.to_string(), "1e+40 is out of range for an amount");
    }

    #[test]
    fn each_refusal_keeps_the_words_the_evidence_shows() {
        let said = |value| read(&value).unwrap_err().to_string();
        assert_eq!(said(json!("a lot")), "`a lot` is not a decimal amount");
        assert_eq!(
            said(json!({"amount": "1,5"})),
            "amount `1,5` is not a decimal amount"
        );
        assert_eq!(
            said(json!({"value": []})),
            "value is an array, not an amount"
        );
        assert_eq!(
            said(json!({"units": 1.5})),
            "units 1.5 is not a whole number"
        );
        assert_eq!(
            said(json!({"units": "x"})),
            "units `x` is not a whole number"
        );
        assert_eq!(
            said(json!({"units": true})),
            "units is a boolean, not a whole number"
        );
        assert_eq!(
            said(json!({"units": 1, "nanos": -5})),
            "units 1 and nanos -5 have different signs"
        );
        let delta = UnreadableDelta(MoneyError::NanosOutOfRange {
            nanos: 1_000_000_000,
        });
        assert_eq!(
            delta.to_string(),
            "priceDelta is unreadable: nanos 1000000000 is outside ±999999999"
        );
    }
}

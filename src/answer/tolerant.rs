//! Tolerant reading of responses whose layout the spec does not show: wrapped in `data` or
//! not, fields one wrapper deeper (`{"quote": {...}}`), contracts grouped by product type at
//! any depth or listed with a `productType`, each possibly nested in a `contract` object,
//! `priceDelta` as a number, a numeric string, `{amount, currency}` or `{value}`. Unknown
//! fields are ignored. Where a capture is configured it replaces these guesses.

use rust_decimal::Decimal;
use serde_json::Value;

use super::money_error::UnreadableDelta;

/// The payload, and whether it was wrapped in `data`.
pub(crate) fn payload(body: &Value) -> (&Value, bool) {
    match body.get("data") {
        Some(inner) if inner.is_object() || inner.is_array() => (inner, true),
        _ => (body, false),
    }
}

pub(crate) fn wrap_note(wrapped: bool) -> &'static str {
    if wrapped {
        "wrapped in data"
    } else {
        "bare body"
    }
}

/// A non-empty string or number field, as a string.
pub(crate) fn string_field(value: &Value, name: &str) -> Option<String> {
    match value.get(name)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `name` in the body, under `data`, or one wrapper deeper (`{"quote": {"id"}}`), with the
/// JSONPath it was found at. Empty strings, nulls and objects are not values.
pub(crate) fn field(body: &Value, name: &str) -> Option<(Value, String)> {
    let usable = |v: &Value| match v {
        Value::String(s) => !s.is_empty(),
        Value::Number(_) => true,
        Value::Object(_) => name == "priceDelta",
        _ => false,
    };
    let (payload, wrapped) = payload(body);
    let root = if wrapped { "$.data" } else { "$" };
    if let Some(v) = payload.get(name).filter(|v| usable(v)) {
        return Some((v.clone(), format!("{root}.{name}")));
    }
    payload.as_object()?.iter().find_map(|(key, inner)| {
        let v = inner.as_object()?.get(name).filter(|v| usable(v))?;
        Some((v.clone(), format!("{root}.{key}.{name}")))
    })
}

/// A `priceDelta` value in any of its shapes (see [`super::money`]), exactly, with the shape's
/// name; an unknown shape is an error naming it.
pub(crate) fn delta_amount(delta: &Value) -> Result<(Decimal, &'static str), UnreadableDelta> {
    super::money::read(delta)
        .map(|(money, shape)| (money.amount, shape))
        .map_err(UnreadableDelta)
}

/// Contracts of `product_type` wherever the body holds them, and how they were found.
pub(crate) fn contracts<'a>(body: &'a Value, product_type: &str) -> (Vec<&'a Value>, String) {
    let mut found = Vec::new();
    let mut how = String::new();
    search(body, product_type, 0, &mut found, &mut how);
    (found, how)
}

fn search<'a>(
    value: &'a Value,
    product_type: &str,
    depth: usize,
    found: &mut Vec<&'a Value>,
    how: &mut String,
) {
    if depth > 8 {
        return;
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(items)) = map.get(product_type) {
                found.extend(items.iter().filter(|c| c.is_object()));
                if how.is_empty() {
                    *how = format!("grouped under {product_type} at depth {depth}");
                }
                return;
            }
            if let Some(obj @ Value::Object(_)) = map.get(product_type) {
                found.push(obj);
                *how = format!("single {product_type} object at depth {depth}");
                return;
            }
            map.values()
                .for_each(|v| search(v, product_type, depth + 1, found, how));
        }
        Value::Array(items) => {
            let typed: Vec<&Value> = items
                .iter()
                .filter(|c| c.get("productType").and_then(Value::as_str) == Some(product_type))
                .collect();
            if !typed.is_empty() {
                found.extend(typed);
                if how.is_empty() {
                    *how = format!("list with productType at depth {depth}");
                }
                return;
            }
            items
                .iter()
                .for_each(|v| search(v, product_type, depth + 1, found, how));
        }
        _ => {}
    }
}

/// A contract element's id: its own `id`, or that of a nested `contract` object.
pub(crate) fn contract_id(element: &Value) -> Option<(String, &'static str)> {
    string_field(element, "id")
        .map(|id| (id, "id"))
        .or_else(|| {
            element
                .get("contract")
                .and_then(|c| string_field(c, "id"))
                .map(|id| (id, "contract.id"))
        })
}

/// The claim status a contract element shows, if it has a claim (beside or inside a nested
/// `contract` object).
pub(crate) fn claim_status(contract: &Value) -> Option<String> {
    let own = |c: &Value| {
        c.get("claim")
            .and_then(|c| c.get("status"))
            .or_else(|| c.get("claimStatus"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    own(contract).or_else(|| contract.get("contract").and_then(own))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_contracts_in_every_layout() {
        let layouts = [
            json!({"data": {"WITHDRAWAL": [{"id": "c1"}]}}),
            json!({"WITHDRAWAL": [{"id": "c1"}]}),
            json!({"data": {"contracts": {"WITHDRAWAL": [{"id": "c1"}]}}}),
            json!({"data": [{"productType": "CHANGE_FOR_ANY_REASON", "id": "c0"}, {"productType": "WITHDRAWAL", "id": "c1"}]}),
        ];
        for body in layouts {
            let (found, how) = contracts(&body, "WITHDRAWAL");
            assert_eq!(found.len(), 1, "{body}");
            assert_eq!(found[0]["id"], "c1");
            assert!(!how.is_empty());
        }
    }

    #[test]
    fn fields_are_found_bare_wrapped_and_one_wrapper_deeper() {
        for (body, path) in [
            (json!({"id": 7}), "$.id"),
            (json!({"data": {"id": "q1"}}), "$.data.id"),
            (json!({"data": {"quote": {"id": "q1"}}}), "$.data.quote.id"),
            (json!({"quote": {"id": "q1"}}), "$.quote.id"),
        ] {
            assert_eq!(field(&body, "id").unwrap().1, path, "{body}");
        }
        assert_eq!(field(&json!({"data": {"a": {"b": {"id": 1}}}}), "id"), None);
        assert_eq!(field(&json!({"id": ""}), "id"), None);
    }

    #[test]
    fn nested_contract_objects_give_id_and_claim_status() {
        let element = json!({"contract": {"id": 12}, "claim": {"status": "ACCEPTED"}});
        assert_eq!(contract_id(&element).unwrap(), ("12".into(), "contract.id"));
        assert_eq!(claim_status(&element).as_deref(), Some("ACCEPTED"));
        let inside = json!({"contract": {"id": "c", "claim": {"status": "REFUNDED"}}});
        assert_eq!(claim_status(&inside).as_deref(), Some("REFUNDED"));
    }

    #[test]
    fn delta_amount_reads_value_objects_too() {
        assert_eq!(
            delta_amount(&json!({"value": "-2.5"}))
                .unwrap()
                .0
                .to_string(),
            "-2.5"
        );
        assert!(delta_amount(&json!({"x": 1})).is_err());
    }

    #[test]
    fn reads_every_delta_shape() {
        for (delta, expected) in [
            (json!(-3.5), "-3.5"),
            (json!("12.50"), "12.50"),
            (json!({"amount": 4, "currency": "EUR"}), "4"),
            (
                json!({"currencyCode": "EUR", "units": "10", "nanos": 770_000_000}),
                "10.77",
            ),
        ] {
            assert_eq!(delta_amount(&delta).unwrap().0.to_string(), expected);
        }
        assert!(delta_amount(&json!("a lot")).is_err());
    }
}

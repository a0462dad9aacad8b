//! Tolerant reading of responses whose layout the spec does not show: wrapped in `data` or
//! not, contracts grouped by product type at any depth or listed with a `productType`,
//! `priceDelta` as a number, a numeric string or `{amount, currency}`. Unknown fields are ignored.

use serde_json::Value;

/// The payload, and whether it was wrapped in `data`.
pub fn payload(body: &Value) -> (&Value, bool) {
    match body.get("data") {
        Some(inner) if inner.is_object() || inner.is_array() => (inner, true),
        _ => (body, false),
    }
}

pub fn wrap_note(wrapped: bool) -> &'static str {
    if wrapped {
        "wrapped in data"
    } else {
        "bare body"
    }
}

/// A non-empty string or number field, as a string.
pub fn string_field(value: &Value, name: &str) -> Option<String> {
    match value.get(name)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `priceDelta` in any of its shapes; `Ok(None)` when absent, `Err` when unreadable.
pub fn price_delta(value: &Value) -> Result<Option<(f64, &'static str)>, String> {
    let Some(delta) = value.get("priceDelta") else {
        return Ok(None);
    };
    let read = match delta {
        Value::Number(n) => n.as_f64().map(|v| (v, "number")),
        Value::String(s) => s.trim().parse::<f64>().ok().map(|v| (v, "numeric string")),
        Value::Object(map) => match map.get("amount") {
            Some(Value::Number(n)) => n.as_f64().map(|v| (v, "object {amount}")),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok().map(|v| (v, "object {amount}")),
            _ => None,
        },
        _ => None,
    };
    read.filter(|(v, _)| v.is_finite())
        .map(Some)
        .ok_or_else(|| format!("priceDelta is unreadable: {delta}"))
}

/// Contracts of `product_type` wherever the body holds them, and how they were found.
pub fn contracts<'a>(body: &'a Value, product_type: &str) -> (Vec<&'a Value>, String) {
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

/// The claim status a contract shows, if it has a claim.
pub fn claim_status(contract: &Value) -> Option<String> {
    contract
        .get("claim")
        .and_then(|c| c.get("status"))
        .or_else(|| contract.get("claimStatus"))
        .and_then(Value::as_str)
        .map(str::to_string)
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
    fn reads_every_delta_shape() {
        for (delta, expected) in [
            (json!(-3.5), -3.5),
            (json!("12.50"), 12.5),
            (json!({"amount": 4, "currency": "EUR"}), 4.0),
        ] {
            assert_eq!(
                price_delta(&json!({"priceDelta": delta}))
                    .unwrap()
                    .unwrap()
                    .0,
                expected
            );
        }
        assert!(price_delta(&json!({"priceDelta": "a lot"})).is_err());
        assert_eq!(price_delta(&json!({})).unwrap(), None);
    }
}

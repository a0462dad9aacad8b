//! Where a value might be in an answer the built-in reading could not follow: every scalar
//! whose key looks like the value's name, as an RFC 9535 JSONPath, best guesses first; and the
//! answer's shape (keys and types, values elided) for the user to read.

use serde_json::Value;

use crate::models::CLAIM_STATUSES;

/// Candidate paths for `name` (a capture name) in `body`, most likely first. Contract values
/// get `{{ product_type }}` in place of the product type's key, as a capture template.
pub fn candidates(body: &Value, name: &str, product_type: &str) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    walk(body, "$", &mut |path, key, value| {
        if let Some(rank) = rank(name, key, value) {
            found.push((
                rank,
                path.matches('.').count(),
                path.to_string(),
                value.clone(),
            ));
        }
    });
    found.sort_by_key(|c| (c.0, c.1));
    let group = format!(".{product_type}");
    found
        .into_iter()
        .map(|(_, _, path, value)| {
            let path = if product_type.is_empty() {
                path
            } else {
                path.replace(&group, ".{{ product_type }}")
            };
            (path, value)
        })
        .collect()
}

/// How well `key` (holding `value`) fits the value named `name`; `None` when it does not.
fn rank(name: &str, key: &str, value: &Value) -> Option<u8> {
    let key_lower = key.to_ascii_lowercase();
    let scalar = value.is_string() || value.is_number();
    match name {
        "id" | "contract_id" | "claim_id" if scalar => {
            let stem = name.trim_end_matches("_id").trim_end_matches("id");
            if key == "id" {
                Some(0)
            } else if !stem.is_empty() && key_lower == format!("{stem}id") {
                Some(1)
            } else if key_lower.ends_with("id") && !key_lower.contains("booking") {
                Some(2)
            } else {
                None
            }
        }
        "reference" if scalar => match key_lower.as_str() {
            "reference" => Some(0),
            k if k.contains("reference") || k == "ref" => Some(1),
            _ => None,
        },
        "price_delta" if key_lower.contains("delta") => Some(0),
        "claim_status" => {
            let known = value.as_str().is_some_and(|s| CLAIM_STATUSES.contains(&s));
            match key_lower.as_str() {
                "status" | "claimstatus" if known => Some(0),
                _ if known => Some(1),
                _ => None,
            }
        }
        _ => None,
    }
}

fn walk(value: &Value, path: &str, visit: &mut dyn FnMut(&str, &str, &Value)) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let here = format!("{path}{}", segment(key));
                visit(&here, key, inner);
                walk(inner, &here, visit);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate().take(20) {
                walk(inner, &format!("{path}[{i}]"), visit);
            }
        }
        _ => {}
    }
}

/// `.key` for a plain name, `['key']` for anything else.
fn segment(key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!(".{key}")
    } else {
        format!("['{}']", key.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// The answer's shape: keys and types, values elided; arrays by their first element.
pub fn shape(value: &Value) -> String {
    let mut text = String::new();
    write_shape(value, 0, &mut text);
    if text.chars().count() > 400 {
        let cut: String = text.chars().take(400).collect();
        format!("{cut}…")
    } else {
        text
    }
}

fn write_shape(value: &Value, depth: usize, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(_) => out.push_str("boolean"),
        Value::Number(_) => out.push_str("number"),
        Value::String(_) => out.push_str("string"),
        Value::Array(items) if depth < 6 => {
            out.push('[');
            if let Some(first) = items.first() {
                write_shape(first, depth + 1, out);
                if items.len() > 1 {
                    out.push_str(", …");
                }
            }
            out.push(']');
        }
        Value::Object(map) if depth < 6 => {
            out.push('{');
            for (i, (key, inner)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&format!("{key:?}: "));
                write_shape(inner, depth + 1, out);
            }
            out.push('}');
        }
        _ => out.push('…'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn candidates_are_ranked_and_templated_by_product_type() {
        let body = json!({"data": {"result": {"quote": {"quoteId": 7, "id": 8, "bookingId": 1,
            "reference": "R", "priceDelta": {"value": 2}}}}});
        let ids: Vec<String> = candidates(&body, "id", "")
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(ids[0], "$.data.result.quote.id");
        assert_eq!(ids[1], "$.data.result.quote.quoteId");
        assert!(!ids.iter().any(|p| p.contains("bookingId")));
        assert_eq!(
            candidates(&body, "reference", "")[0].0,
            "$.data.result.quote.reference"
        );
        assert_eq!(
            candidates(&body, "price_delta", "")[0].0,
            "$.data.result.quote.priceDelta"
        );
        let contracts =
            json!({"WITHDRAWAL": [{"contract": {"id": 12}, "claim": {"status": "ACCEPTED"}}]});
        assert_eq!(
            candidates(&contracts, "contract_id", "WITHDRAWAL")[0].0,
            "$.{{ product_type }}[0].contract.id"
        );
        assert_eq!(
            candidates(&contracts, "claim_status", "WITHDRAWAL")[0].0,
            "$.{{ product_type }}[0].claim.status"
        );
    }

    #[test]
    fn odd_keys_are_quoted_and_shapes_elide_values() {
        let body = json!({"a-b": {"id": "x"}});
        assert_eq!(candidates(&body, "id", "")[0].0, "$['a-b'].id");
        assert_eq!(
            shape(&json!({"data": {"id": 1, "tags": ["a", "b"], "ok": true}})),
            r#"{"data": {"id": number, "ok": boolean, "tags": [string, …]}}"#
        );
    }
}

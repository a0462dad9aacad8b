//! Where a value might be in an answer the built-in reading could not follow: every scalar
//! whose key looks like the value's name, as an RFC 9535 JSONPath, best guesses first; and the
//! answer's shape (keys and types, values elided) for the user to read.

use serde_json::Value;

use crate::endpoints::{AnswerView, CaptureSpec, HeaderCapture};
use crate::models::CLAIM_STATUSES;

/// The last segment of a URL path in a header: how `Location: /contracts/42` names the id.
const LAST_SEGMENT: &str = "/([^/?#]+)/?(?:[?#].*)?$";

/// Candidates for `name` (a capture name) in an answer, most likely first: body paths as
/// RFC 9535 JSONPaths, then ids in a `Location` or `Content-Location` header. Contract values
/// get `{{ product_type }}` in place of the product type, as a capture template: a group key
/// becomes `.{{ product_type }}`, an array whose entries carry their product type a filter.
pub(super) fn candidates(
    answer: AnswerView<'_>,
    name: &str,
    product_type: &str,
) -> Vec<(CaptureSpec, Value)> {
    let mut found = Vec::new();
    walk(
        answer.body,
        "$",
        product_type,
        &mut |path, key, value, siblings| {
            if let Some(rank) = rank(name, key, value) {
                found.push((rank, depth(path), path.to_string(), value.clone()));
            }
            // A reference is often beside the id under another name, or is the id itself.
            if name == "reference" && key == "id" && (value.is_string() || value.is_number()) {
                found.push((4, depth(path), path.to_string(), value.clone()));
                for (other, inner) in siblings {
                    if other != "id" && inner.is_string() && rank(name, other, inner).is_none() {
                        let parent = &path[..path.len() - segment("id").len()];
                        let sibling = format!("{parent}{}", segment(other));
                        found.push((3, depth(&sibling), sibling, inner.clone()));
                    }
                }
            }
        },
    );
    found.sort_by_key(|c| (c.0, c.1));
    found.dedup_by(|a, b| a.2 == b.2);
    let group = format!(".{product_type}");
    let mut out: Vec<(CaptureSpec, Value)> = found
        .into_iter()
        .map(|(_, _, path, value)| {
            let path = if product_type.is_empty() {
                path
            } else {
                path.replace(&group, ".{{ product_type }}")
            };
            (CaptureSpec::Path(path), value)
        })
        .collect();
    if matches!(name, "id" | "contract_id" | "claim_id") {
        out.extend(header_candidates(answer));
    }
    out
}

fn depth(path: &str) -> usize {
    path.matches(['.', '[']).count()
}

/// An id as the last path segment of a `Location` (or `Content-Location`) header.
fn header_candidates(answer: AnswerView<'_>) -> Vec<(CaptureSpec, Value)> {
    let pattern = regex::Regex::new(LAST_SEGMENT).expect("a valid regex");
    ["Location", "Content-Location"]
        .into_iter()
        .filter_map(|header| {
            let value = answer.header(header)?;
            let id = pattern.captures(value)?.get(1)?.as_str().to_string();
            Some((
                CaptureSpec::Header(HeaderCapture {
                    header: header.to_string(),
                    pattern: Some(LAST_SEGMENT.to_string()),
                }),
                Value::String(id),
            ))
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
        // `quote_ref`, `quoteRef`, `quoteReference`, `quote_reference`; never `href`.
        "reference" if scalar => match key_lower.as_str() {
            "reference" => Some(0),
            k if k.contains("reference") || k == "ref" => Some(1),
            k if (k.ends_with("_ref") || k.ends_with("ref")) && !k.ends_with("href") => Some(1),
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

/// The key of an object's own product type, in the answer's spelling (`productType`,
/// `product_type`, `type` beside a product-type value).
fn product_type_key<'a>(
    map: &'a serde_json::Map<String, Value>,
    product_type: &str,
) -> Option<&'a str> {
    map.iter().find_map(|(key, value)| {
        let folded = key.to_ascii_lowercase().replace(['_', '-'], "");
        let named =
            folded == "producttype" || (folded == "type" && value.as_str() == Some(product_type));
        named.then_some(key.as_str())
    })
}

type Visit<'v> = dyn FnMut(&str, &str, &Value, &serde_json::Map<String, Value>) + 'v;

fn walk(value: &Value, path: &str, product_type: &str, visit: &mut Visit<'_>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let here = format!("{path}{}", segment(key));
                visit(&here, key, inner, map);
                walk(inner, &here, product_type, visit);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate().take(20) {
                // Entries that carry their product type are chosen by it, not by position.
                let typed = inner
                    .as_object()
                    .filter(|_| !product_type.is_empty())
                    .and_then(|m| {
                        let key = product_type_key(m, product_type)?;
                        Some((key, m.get(key)?.as_str() == Some(product_type)))
                    });
                match typed {
                    Some((_, false)) => continue,
                    Some((key, true)) => {
                        let filter =
                            format!("{path}[?@{} == '{{{{ product_type }}}}']", segment(key));
                        walk(inner, &filter, product_type, visit);
                    }
                    None => walk(inner, &format!("{path}[{i}]"), product_type, visit),
                }
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
pub(super) fn shape(value: &Value) -> String {
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
    use std::collections::BTreeMap;

    static NO_HEADERS: BTreeMap<String, String> = BTreeMap::new();

    fn view(body: &Value) -> AnswerView<'_> {
        AnswerView {
            body,
            headers: &NO_HEADERS,
        }
    }

    #[test]
    fn a_flat_contract_array_gets_a_filter_and_a_location_header_an_id() {
        let body = json!([
            {"productType": "CANCELLATION", "id": "c0"},
            {"productType": "WITHDRAWAL", "id": "c1", "claim": {"status": "ACCEPTED"}}
        ]);
        let found = candidates(view(&body), "contract_id", "WITHDRAWAL");
        assert_eq!(
            found[0].0.describe(),
            "$[?@.productType == '{{ product_type }}'].id"
        );
        assert_eq!(found[0].1, json!("c1"));
        let headers: BTreeMap<String, String> =
            [("location".to_string(), "/contracts/ct-9".to_string())].into();
        let empty = json!(null);
        let found = candidates(
            AnswerView {
                body: &empty,
                headers: &headers,
            },
            "contract_id",
            "",
        );
        assert_eq!(found[0].1, json!("ct-9"));
        assert!(matches!(&found[0].0, CaptureSpec::Header(h) if h.header == "Location"));
        let quote = json!({"quote": {"id": "q1", "code": "ABC"}});
        let refs: Vec<String> = candidates(view(&quote), "reference", "")
            .into_iter()
            .map(|c| c.0.describe())
            .collect();
        assert_eq!(refs, ["$.quote.code", "$.quote.id"]);
    }

    #[test]
    fn candidates_are_ranked_and_templated_by_product_type() {
        let body = json!({"data": {"result": {"quote": {"quoteId": 7, "id": 8, "bookingId": 1,
            "reference": "R", "priceDelta": {"value": 2}}}}});
        let ids: Vec<String> = candidates(view(&body), "id", "")
            .into_iter()
            .map(|c| c.0.describe())
            .collect();
        assert_eq!(ids[0], "$.data.result.quote.id");
        assert_eq!(ids[1], "$.data.result.quote.quoteId");
        assert!(!ids.iter().any(|p| p.contains("bookingId")));
        assert_eq!(
            candidates(view(&body), "reference", "")[0].0.describe(),
            "$.data.result.quote.reference"
        );
        assert_eq!(
            candidates(view(&body), "price_delta", "")[0].0.describe(),
            "$.data.result.quote.priceDelta"
        );
        let contracts =
            json!({"WITHDRAWAL": [{"contract": {"id": 12}, "claim": {"status": "ACCEPTED"}}]});
        assert_eq!(
            candidates(view(&contracts), "contract_id", "WITHDRAWAL")[0]
                .0
                .describe(),
            "$.{{ product_type }}[0].contract.id"
        );
        assert_eq!(
            candidates(view(&contracts), "claim_status", "WITHDRAWAL")[0]
                .0
                .describe(),
            "$.{{ product_type }}[0].claim.status"
        );
    }

    #[test]
    fn odd_keys_are_quoted_and_shapes_elide_values() {
        let body = json!({"a-b": {"id": "x"}});
        assert_eq!(
            candidates(view(&body), "id", "")[0].0.describe(),
            "$['a-b'].id"
        );
        assert_eq!(
            shape(&json!({"data": {"id": 1, "tags": ["a", "b"], "ok": true}})),
            r#"{"data": {"id": number, "ok": boolean, "tags": [string, …]}}"#
        );
    }
}

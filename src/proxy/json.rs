//! Reading a partner's or a staging's JSON without knowing its layout: the proxy sees bodies
//! of every shape a partner may send and every layout a staging may answer in.

use serde_json::Value;

/// The object keys of a JSON value as paths (`data.status`), leaves and branches alike.
pub(super) fn field_paths(value: &Value, prefix: &str, into: &mut Vec<String>) {
    if let Value::Object(map) = value {
        for (key, inner) in map {
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            into.push(path.clone());
            field_paths(inner, &path, into);
        }
    }
}

pub(super) fn has_path(value: &Value, path: &str) -> bool {
    path.split('.')
        .try_fold(value, |here, key| here.get(key))
        .is_some()
}

pub(super) fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The first value under `key` in a depth-first walk (answers wrap their payload variously).
pub(super) fn find(value: &Value, key: &str) -> Option<String> {
    match value {
        Value::Object(map) => map
            .get(key)
            .and_then(text)
            .or_else(|| map.values().find_map(|v| find(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find(v, key)),
        _ => None,
    }
}

/// Ids of every contract an answer shows: objects with a `productType`, and `contractId`s.
pub(super) fn contract_ids(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if map.contains_key("productType")
                && let Some(id) = map.get("id").and_then(text)
            {
                into.push(id);
            }
            if let Some(id) = map.get("contractId").and_then(text) {
                into.push(id);
            }
            map.values().for_each(|v| contract_ids(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| contract_ids(v, into)),
        _ => {}
    }
}

//! JSON Patch (RFC 6902) applied to a document, for a staging whose updates take
//! `application/json-patch+json`: `add`, `remove`, `replace`, `move`, `copy` and `test`, each
//! at a JSON Pointer (RFC 6901). A patch that cannot apply says which operation and why.

use serde_json::Value;

/// Applies `patch` (an array of operations) to `document`, in order; all or nothing.
pub(crate) fn apply(document: &Value, patch: &Value) -> Result<Value, String> {
    let Value::Array(operations) = patch else {
        return Err("a JSON Patch is an array of operations".into());
    };
    let mut out = document.clone();
    for (i, operation) in operations.iter().enumerate() {
        apply_one(&mut out, operation).map_err(|e| format!("operation {i}: {e}"))?;
    }
    Ok(out)
}

fn apply_one(document: &mut Value, operation: &Value) -> Result<(), String> {
    let op = operation["op"].as_str().ok_or("no `op`")?;
    let path = operation["path"].as_str().ok_or("no `path`")?;
    let value = || operation.get("value").cloned().ok_or("no `value`");
    let from = || operation["from"].as_str().ok_or("no `from`");
    match op {
        "add" => add(document, path, value()?),
        "remove" => remove(document, path).map(drop),
        "replace" => {
            remove(document, path)?;
            add(document, path, value()?)
        }
        "move" => {
            let moved = remove(document, from()?)?;
            add(document, path, moved)
        }
        "copy" => {
            let copied = document
                .pointer(from()?)
                .cloned()
                .ok_or("`from` names nothing")?;
            add(document, path, copied)
        }
        "test" => match document.pointer(path) {
            Some(found) if *found == value()? => Ok(()),
            _ => Err(format!("test failed at `{path}`")),
        },
        other => Err(format!("`{other}` is no JSON Patch operation")),
    }
}

/// The parent of `path` and its last token, unescaped (`~1` is `/`, `~0` is `~`).
fn split(path: &str) -> Result<(&str, String), String> {
    let (parent, last) = path
        .rsplit_once('/')
        .ok_or_else(|| format!("`{path}` is not a JSON Pointer"))?;
    Ok((parent, last.replace("~1", "/").replace("~0", "~")))
}

fn add(document: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *document = value;
        return Ok(());
    }
    let (parent, last) = split(path)?;
    match document.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.insert(last, value);
            Ok(())
        }
        Some(Value::Array(items)) => {
            let index = match last.as_str() {
                "-" => items.len(),
                n => n.parse().map_err(|_| format!("`{n}` is no array index"))?,
            };
            if index > items.len() {
                return Err(format!("index {index} is past the end of `{parent}`"));
            }
            items.insert(index, value);
            Ok(())
        }
        _ => Err(format!("`{parent}` names no object or array")),
    }
}

fn remove(document: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split(path)?;
    let removed = match document.pointer_mut(parent) {
        Some(Value::Object(map)) => map.remove(&last),
        Some(Value::Array(items)) => match last.parse::<usize>() {
            Ok(i) if i < items.len() => Some(items.remove(i)),
            _ => None,
        },
        _ => None,
    };
    removed.ok_or_else(|| format!("`{path}` names nothing"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_rfc_examples_apply_and_a_failed_test_changes_nothing() {
        let document = json!({"client": {"firstname": "A"}, "quotes": [{"id": "q1"}]});
        let patch = json!([
            {"op": "replace", "path": "/client/firstname", "value": "Ada"},
            {"op": "add", "path": "/quotes/-", "value": {"id": "q2"}},
            {"op": "remove", "path": "/quotes/0"},
            {"op": "copy", "from": "/client", "path": "/owner"},
            {"op": "test", "path": "/owner/firstname", "value": "Ada"},
        ]);
        let patched = apply(&document, &patch).unwrap();
        assert_eq!(
            patched,
            json!({"client": {"firstname": "Ada"}, "quotes": [{"id": "q2"}], "owner": {"firstname": "Ada"}})
        );
        let failing = json!([{"op": "test", "path": "/client/firstname", "value": "B"}]);
        assert!(
            apply(&document, &failing)
                .unwrap_err()
                .contains("operation 0")
        );
        assert!(apply(&document, &json!({"op": "add"})).is_err());
        let missing = json!([{"op": "replace", "path": "/nope", "value": 1}]);
        assert!(
            apply(&document, &missing)
                .unwrap_err()
                .contains("names nothing")
        );
    }
}

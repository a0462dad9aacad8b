//! An answer's shape: each JSON path it holds (array items generalised to `[*]`) and the JSON
//! types seen there. Values are never kept, so ids, timestamps and generated data cannot
//! differ between two runs by construction; only keys and types can.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// The JSON types seen at each path of the answers of one operation.
pub(crate) type Shape = BTreeMap<String, BTreeSet<JsonType>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum JsonType {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

impl JsonType {
    fn of(value: &Value) -> JsonType {
        match value {
            Value::Null => JsonType::Null,
            Value::Bool(_) => JsonType::Boolean,
            Value::Number(_) => JsonType::Number,
            Value::String(_) => JsonType::String,
            Value::Array(_) => JsonType::Array,
            Value::Object(_) => JsonType::Object,
        }
    }

    pub(crate) fn word(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "boolean",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }
}

/// Adds the paths and types of `value` to `shape`.
pub(crate) fn add(shape: &mut Shape, value: &Value) {
    walk(shape, "$".to_string(), value);
}

fn walk(shape: &mut Shape, path: String, value: &Value) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                walk(shape, format!("{path}.{key}"), inner);
            }
        }
        Value::Array(items) => {
            let item = format!("{path}[*]");
            for inner in items {
                walk(shape, item.clone(), inner);
            }
        }
        _ => {}
    }
    shape.entry(path).or_default().insert(JsonType::of(value));
}

/// The types at `path` in words: `string`, `null or string`.
pub(crate) fn words(types: &BTreeSet<JsonType>) -> String {
    let words: Vec<&str> = types.iter().map(|t| t.word()).collect();
    words.join(" or ")
}

/// Types a value had in both sets: none means the field was retyped (null aside, which an
/// optional field takes whatever the data).
pub(crate) fn retyped(before: &BTreeSet<JsonType>, after: &BTreeSet<JsonType>) -> bool {
    let solid = |set: &BTreeSet<JsonType>| -> BTreeSet<JsonType> {
        set.iter()
            .copied()
            .filter(|t| *t != JsonType::Null)
            .collect()
    };
    let (before, after) = (solid(before), solid(after));
    !before.is_empty() && !after.is_empty() && before.is_disjoint(&after)
}

/// The path a read's source names, in a shape's spelling: `built-in: $.data.items[0].id` and
/// `$['data'].id` become `$.data.items[*].id`; `None` when the source is not a plain path
/// (a header, a filter, a described reading).
pub(crate) fn read_path(from: &str) -> Option<String> {
    let path = from.strip_prefix("built-in: ").unwrap_or(from).trim();
    let mut rest = path.strip_prefix('$')?;
    let mut out = String::from("$");
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() || name == "*" {
                return None;
            }
            out.push('.');
            out.push_str(name);
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inside = after[..end].trim();
            let quoted = (inside.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                .or_else(|| inside.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
            match quoted {
                Some(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                None if inside == "*" || inside.parse::<i64>().is_ok() => out.push_str("[*]"),
                None => return None,
            }
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_generalised_and_values_dropped() {
        let mut one = Shape::new();
        add(
            &mut one,
            &serde_json::json!({"data": {"id": "a1", "items": [{"n": 1}, {"n": 2}]}}),
        );
        let mut two = Shape::new();
        add(
            &mut two,
            &serde_json::json!({"data": {"items": [{"n": 9}], "id": "zz"}}),
        );
        assert_eq!(one, two);
        assert!(one.contains_key("$.data.items[*].n"));
        assert_eq!(words(&one["$.data.id"]), "string");
    }

    #[test]
    fn retyping_ignores_null_and_needs_disjoint_types() {
        use JsonType::*;
        let set = |t: &[JsonType]| t.iter().copied().collect::<BTreeSet<_>>();
        assert!(retyped(&set(&[Number]), &set(&[String])));
        assert!(!retyped(&set(&[Number]), &set(&[Number, Null])));
        assert!(!retyped(&set(&[Null]), &set(&[String])));
        assert!(!retyped(&set(&[Number]), &set(&[Number, String])));
    }

    #[test]
    fn read_sources_become_shape_paths() {
        assert_eq!(
            read_path("built-in: $.data.id").as_deref(),
            Some("$.data.id")
        );
        assert_eq!(
            read_path("$['data'].items[0].id").as_deref(),
            Some("$.data.items[*].id")
        );
        assert_eq!(read_path("header: Location"), None);
        assert_eq!(
            read_path("built-in: id of the first WITHDRAWAL contract"),
            None
        );
        assert_eq!(read_path("$..id"), None);
    }
}

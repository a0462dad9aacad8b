//! The JSON Schema of `ppcert.toml` (`ppcert schema config`), derived from the types that read
//! the file, with the bounds and names the parser checks beyond its types.

use serde_json::{Map, Value, json};

use super::file::FileConfig;
use crate::bounds;
use crate::models::Operation;

/// Draft-07, the newest draft every TOML editor's validator reads (Taplo, Even Better TOML).
pub fn config_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let mut schema = generator.into_root_schema_for::<FileConfig>().to_value();
    tidy(&mut schema);
    schema["title"] = json!("ppcert.toml");
    let run = &mut schema["definitions"]["RunSection"]["properties"];
    bound(
        &mut run["concurrency"],
        bounds::CONCURRENCY.start(),
        bounds::CONCURRENCY.end(),
    );
    bound(
        &mut run["retries"],
        bounds::RETRIES.start(),
        bounds::RETRIES.end(),
    );
    bound(
        &mut run["timeout_secs"],
        bounds::TIMEOUT_SECS.start(),
        bounds::TIMEOUT_SECS.end(),
    );
    // `sandbox` is what leaving `base_url` out means; the file may not say it.
    let environment = &mut schema["definitions"]["TargetSection"]["properties"]["environment"];
    *environment = json!({
        "description": environment["description"],
        "enum": ["staging", "production"],
    });
    if let Some(definitions) = schema["definitions"].as_object_mut() {
        definitions.remove("Environment");
    }
    let names: Vec<&str> = Operation::ALL.iter().map(|op| op.as_str()).collect();
    schema["properties"]["endpoints"]["propertyNames"] = json!({ "enum": names });
    schema
}

/// What serde's view adds that a TOML file cannot hold: `null` (TOML has none), defaults of
/// `null`, Rust's integer formats; and doc comments' line breaks.
fn tidy(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(tidy),
        Value::Object(object) => {
            object.remove("default");
            object.remove("format");
            if let Some(Value::String(text)) = object.get_mut("description") {
                *text = text.replace('\n', " ");
            }
            without_null(object);
            object.values_mut().for_each(tidy);
        }
        _ => {}
    }
}

/// `"type": ["string", "null"]` becomes `"string"`; `anyOf: [X, null]` becomes X.
fn without_null(object: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [one] = types.as_slice() {
            let one = one.clone();
            object.insert("type".into(), one);
        }
    }
    let Some(Value::Array(any_of)) = object.get_mut("anyOf") else {
        return;
    };
    any_of.retain(|s| s.get("type").is_none_or(|t| t != "null"));
    if let [Value::Object(one)] = any_of.as_slice() {
        let one = one.clone();
        object.remove("anyOf");
        if one.contains_key("$ref") {
            // Draft-07 ignores what sits beside a `$ref`, the description included.
            object.insert("allOf".into(), json!([one]));
            return;
        }
        for (key, value) in one {
            object.entry(key).or_insert(value);
        }
    }
}

/// The bounds the flags and the file share, on an integer key's schema.
fn bound<T: serde::Serialize>(key: &mut Value, min: &T, max: &T) {
    key["minimum"] = json!(min);
    key["maximum"] = json!(max);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key, at any depth, says what it is for: the schema is what an editor shows.
    fn undescribed(schema: &Value, at: &str, found: &mut Vec<String>) {
        let Some(object) = schema.as_object() else {
            return;
        };
        if let Some(Value::Object(properties)) = object.get("properties") {
            for (key, property) in properties {
                let has = property["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty());
                if !has {
                    found.push(format!("{at}.{key}"));
                }
            }
        }
        for (key, value) in object {
            undescribed(value, &format!("{at}/{key}"), found);
        }
    }

    #[test]
    fn every_key_of_the_schema_has_a_description_and_no_null() {
        let schema = config_schema();
        let mut found = Vec::new();
        undescribed(&schema, "", &mut found);
        assert!(found.is_empty(), "keys without a description: {found:?}");
        let text = schema.to_string();
        assert!(!text.contains("null"), "TOML has no null: {text}");
        for section in ["target", "partner", "run", "endpoints", "auth", "data"] {
            assert!(schema["properties"][section].is_object(), "{section}");
        }
    }
}

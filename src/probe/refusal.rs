//! Reads a staging's refusal for what it wants and proposes the setting that gives it: a
//! header every call needs, a field spelled in another format (a decimal string), a field the
//! staging does not know. The words come from JSON:API (`errors[].source.pointer`/`header`),
//! RFC 9457 (`invalid-params`, `errors[].pointer`) and `{"error": {"field"}}` bodies.

use serde_json::Value;

use crate::models::Operation;

/// One thing a refusal said: its words, and the field or header it named, if any.
#[derive(Debug, Clone, Default, PartialEq)]
struct Said {
    words: String,
    field: Option<String>,
    header: Option<String>,
}

fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    }
}

/// Every item of the refusal: the body itself, `error`, `errors[]`, `invalid-params[]`.
fn said(body: &Value) -> Vec<Said> {
    let one = |item: &Value| {
        let source = item.get("source");
        let words = ["detail", "message", "reason", "title", "code"]
            .iter()
            .filter_map(|k| text(item.get(*k)))
            .collect::<Vec<_>>()
            .join(" ");
        Said {
            words,
            field: ["pointer", "field", "name", "path", "parameter"]
                .iter()
                .find_map(|k| text(source.and_then(|s| s.get(*k))).or_else(|| text(item.get(*k)))),
            header: text(source.and_then(|s| s.get("header"))),
        }
    };
    let mut found = vec![one(body)];
    if let Some(error) = body.get("error").filter(|e| e.is_object()) {
        found.push(one(error));
    }
    for key in [
        "errors",
        "invalid-params",
        "invalid_params",
        "invalidParams",
    ] {
        if let Some(Value::Array(items)) = body.get(key) {
            found.extend(items.iter().filter(|i| i.is_object()).map(one));
        }
    }
    found.retain(|s| !s.words.is_empty() || s.header.is_some());
    found
}

/// A header name the words say is needed or missing (`needs the header X-Api-Version`).
fn needed_header(words: &str) -> Option<String> {
    let lower = words.to_ascii_lowercase();
    if !["need", "missing", "required", "expected", "must"]
        .iter()
        .any(|w| lower.contains(w))
    {
        return None;
    }
    let pattern = regex::Regex::new(r#"(?i)\bheaders?\s*[`'"]?([A-Za-z][A-Za-z0-9-]*[A-Za-z0-9])"#)
        .expect("a valid regex");
    let name = pattern.captures(words)?.get(1)?.as_str().to_string();
    (!matches!(
        name.to_ascii_lowercase().as_str(),
        "is" | "was" | "the" | "value"
    ))
    .then_some(name)
}

/// `/data/trips/0/price/amount` or `data.trips[0].price.amount` as a template expression
/// over the request the spec dialect would send: `request.data.trips[0].price.amount`.
fn request_expression(field: &str) -> String {
    let dotted = if field.starts_with('/') {
        field
            .trim_start_matches('/')
            .split('/')
            .map(|part| match part.parse::<usize>() {
                Ok(i) => format!("[{i}]"),
                Err(_) => format!(".{part}"),
            })
            .collect::<String>()
            .trim_start_matches('.')
            .to_string()
    } else {
        field.trim_start_matches("$.").to_string()
    };
    format!("request.{}", dotted.replace(".[", "["))
}

/// The settings a refusal of `op` points at, as lines for the user; empty when it names none.
pub(super) fn proposals(op: Operation, body: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in said(body) {
        let header = item.header.clone().or_else(|| needed_header(&item.words));
        let lower = item.words.to_ascii_lowercase();
        let line = if let Some(name) = header {
            format!(
                "the staging wants the header {name} on every call: add `[target.headers] {name} = \"...\"` to ppcert.toml (or pass `--header \"{name}: ...\"`)"
            )
        } else if let Some(field) = &item.field {
            let expression = request_expression(field);
            if lower.contains("decimal string") || lower.contains("must be a string") {
                format!(
                    "the staging wants `{field}` as a decimal string: spell it so in `[endpoints.{op}] body`, e.g. `\"{{{{ {expression} | string }}}}\"` where the value goes"
                )
            } else if lower.contains("not a field") || lower.contains("unknown field") {
                format!(
                    "the staging does not know `{field}` ({}): try `--dialect provider-docs`, or spell the body in `[endpoints.{op}] body`",
                    item.words
                )
            } else {
                format!(
                    "the staging refused `{field}` ({}): `[endpoints.{op}] body` sets how it is sent (the spec's value is `{{{{ {expression} }}}}`)",
                    item.words
                )
            }
        } else {
            continue;
        };
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_missing_header_in_words_or_in_a_json_api_source_names_the_setting() {
        let words = json!({"errors": [{"detail": "this API needs the header X-Api-Version"}]});
        let source =
            json!({"errors": [{"code": "missing", "source": {"header": "X-Api-Version"}}]});
        for body in [words, source] {
            let lines = proposals(Operation::Quote, &body);
            assert_eq!(lines.len(), 1, "{lines:?}");
            assert!(
                lines[0].contains("[target.headers] X-Api-Version"),
                "{lines:?}"
            );
        }
    }

    #[test]
    fn a_field_format_names_the_field_and_the_template_that_sends_it() {
        let problem = json!({"title": "Invalid", "detail": "the request is invalid",
            "invalid-params": [{"name": "data.trips[0].price.amount", "reason": "must be a decimal string"}]});
        let pointer = json!({"errors": [{"detail": "must be a decimal string",
            "source": {"pointer": "/data/trips/0/price/amount"}}]});
        for body in [problem, pointer] {
            let lines = proposals(Operation::Quote, &body);
            assert!(
                lines.iter().any(|l| l.contains("[endpoints.quote] body")
                    && l.contains("request.data.trips[0].price.amount | string")),
                "{lines:?}"
            );
        }
    }

    #[test]
    fn words_that_name_nothing_propose_nothing() {
        assert!(
            proposals(
                Operation::Quote,
                &json!({"error": {"message": "try later"}})
            )
            .is_empty()
        );
        assert!(proposals(Operation::Quote, &json!({"detail": "the header is fine"})).is_empty());
    }
}

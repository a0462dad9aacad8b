//! The server's own words for a refusal, as servers write them: RFC 9457 problem details
//! (`application/problem+json`: `title`, `detail`, `errors` / `invalid-params`), the
//! `{"error": {...}}` shape (the spec's sandbox and many gateways), `{"errors": [...]}`, or
//! else an excerpt of the body. Shown in failure lines, JUnit messages and reports.

use serde_json::Value;

/// How long a quoted body may be in a failure line.
const EXCERPT_CHARS: usize = 300;

/// The error a body states, if it has an error shape; `None` for an ordinary answer.
pub(crate) fn error_words(body: &Value, content_type: Option<&str>) -> Option<String> {
    let problem_type = content_type.is_some_and(|t| {
        t.to_ascii_lowercase()
            .starts_with("application/problem+json")
    });
    let object = body.as_object()?;
    if (problem_type || looks_like_problem(object))
        && let Some(words) = problem_words(object)
    {
        return Some(words);
    }
    if let Some(error) = object.get("error").filter(|e| !e.is_null()) {
        return Some(error_object_words(error));
    }
    match object.get("errors") {
        Some(Value::Array(items)) if !items.is_empty() => Some(list_words(items, None)),
        Some(Value::Object(map)) if !map.is_empty() => Some(
            map.iter()
                .map(|(field, why)| format!("{field}: {}", text_of(why)))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        _ => None,
    }
}

/// The top-level keys [`error_words`] reads: a JSON object naming none of them states no
/// error, whatever the content type.
const ERROR_KEYS: [&str; 6] = ["type", "title", "status", "detail", "error", "errors"];

/// [`error_words`] of a body's JSON text. Most answers are ordinary objects: their top-level
/// keys are scanned without building the body (a run asks this of every answer, several
/// times), and only a body naming one of [`ERROR_KEYS`] is parsed whole.
pub(crate) fn error_words_in(json: &str, content_type: Option<&str>) -> Option<String> {
    if !names_an_error_key(json) {
        return None;
    }
    let body = serde_json::from_str(json).unwrap_or(Value::Null);
    error_words(&body, content_type)
}

/// Whether `json` is an object with one of [`ERROR_KEYS`] at its top level; true too when the
/// text cannot be scanned (the whole parse then decides, as before).
fn names_an_error_key(json: &str) -> bool {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Scan;
    impl<'de> Visitor<'de> for Scan {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut named = false;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                named |= ERROR_KEYS.contains(&key.as_ref());
                map.next_value::<IgnoredAny>()?;
            }
            Ok(named)
        }
        // Anything but an object states no error.
        fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_str<E>(self, _: &str) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_unit<E>(self) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(false)
        }
    }
    let mut de = serde_json::Deserializer::from_str(json);
    match de.deserialize_any(Scan) {
        Ok(named) => named || de.end().is_err(),
        Err(_) => true,
    }
}

/// What to say about a refused answer: its error words, else an excerpt of the body.
pub(crate) fn describe(body: &Value, content_type: Option<&str>) -> String {
    error_words(body, content_type).unwrap_or_else(|| match body {
        Value::Null => "an empty body".to_string(),
        other => format!("the answer was: {}", excerpt(other)),
    })
}

/// A short quote of a body, cut on a character boundary.
pub(crate) fn excerpt(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.chars().count() <= EXCERPT_CHARS {
        text
    } else {
        let cut: String = text.chars().take(EXCERPT_CHARS).collect();
        format!("{cut}…")
    }
}

/// RFC 9457 names `type`, `title`, `status`, `detail`; a body with two of them is a problem.
fn looks_like_problem(object: &serde_json::Map<String, Value>) -> bool {
    ["type", "title", "status", "detail"]
        .iter()
        .filter(|k| object.contains_key(**k))
        .count()
        >= 2
}

fn problem_words(object: &serde_json::Map<String, Value>) -> Option<String> {
    let title = object.get("title").and_then(Value::as_str);
    let detail = object.get("detail").and_then(Value::as_str);
    let mut words = match (title, detail) {
        (Some(t), Some(d)) if t != d => format!("{t}: {d}"),
        (Some(t), _) => t.to_string(),
        (None, Some(d)) => d.to_string(),
        (None, None) => return None,
    };
    for key in [
        "errors",
        "invalid-params",
        "invalid_params",
        "invalidParams",
    ] {
        if let Some(Value::Array(items)) = object.get(key)
            && !items.is_empty()
        {
            words = format!("{words} ({})", list_words(items, detail));
        }
    }
    Some(words)
}

fn error_object_words(error: &Value) -> String {
    let Some(map) = error.as_object() else {
        return text_of(error);
    };
    let message = map
        .get("message")
        .or_else(|| map.get("detail"))
        .or_else(|| map.get("title"))
        .map(text_of);
    let code = map.get("code").map(text_of);
    let field = map.get("field").or_else(|| map.get("pointer")).map(text_of);
    let mut words = match (code, message) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (None, Some(m)) => m,
        (Some(c), None) => c,
        (None, None) => excerpt(error),
    };
    if let Some(field) = field {
        words = format!("{words} (field {field})");
    }
    words
}

/// `[{"name": "x", "reason": "y"}, "text", {"field": ..., "message": ...}]` as one line.
/// `detail` is the problem's own detail: an item only repeating it is named by its field.
fn list_words(items: &[Value], detail: Option<&str>) -> String {
    items
        .iter()
        .take(5)
        .map(|item| match item.as_object() {
            Some(map) => item_words(item, map, detail),
            None => text_of(item),
        })
        .collect::<Vec<_>>()
        .join("; ")
        + if items.len() > 5 { "; and more" } else { "" }
}

/// One error item: its code and words, and the field, parameter or header it names (directly
/// or as JSON:API's `source`), each said once.
fn item_words(item: &Value, map: &serde_json::Map<String, Value>, detail: Option<&str>) -> String {
    let named = ["name", "field", "pointer", "path"]
        .iter()
        .find_map(|k| map.get(*k))
        .map(text_of);
    let source = map.get("source").and_then(Value::as_object).and_then(|s| {
        [
            ("pointer", "field"),
            ("parameter", "parameter"),
            ("header", "header"),
        ]
        .iter()
        .find_map(|(key, label)| s.get(*key).map(|v| format!("{label} {}", text_of(v))))
    });
    let why = ["reason", "message", "detail", "title"]
        .iter()
        .find_map(|k| map.get(*k))
        .map(text_of);
    let repeated = why
        .as_deref()
        .is_some_and(|w| detail.is_some_and(|d| d == w || d.ends_with(w)));
    let said = match (map.get("code").map(text_of), why) {
        (Some(code), Some(why)) if code != why => format!("{code}: {why}"),
        (_, Some(why)) => why,
        (Some(code), None) => code,
        (None, None) => excerpt(item),
    };
    match (named, source) {
        (Some(name), _) if repeated => format!("field {name}"),
        (Some(name), _) => format!("{name}: {said}"),
        (None, Some(source)) if repeated => source,
        (None, Some(source)) => format!("{said} ({source})"),
        (None, None) => said,
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => excerpt(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn problem_details_give_title_detail_and_invalid_params() {
        let body = json!({"type": "https://example.com/probs/invalid", "title": "Invalid request",
            "status": 400, "detail": "birthday is required",
            "invalid-params": [{"name": "data.travelers[0].birthday", "reason": "missing"}]});
        assert_eq!(
            error_words(&body, Some("application/problem+json")).unwrap(),
            "Invalid request: birthday is required (data.travelers[0].birthday: missing)"
        );
        // Without the media type the member names still say it is a problem.
        assert!(error_words(&body, Some("application/json")).is_some());
    }

    #[test]
    fn error_objects_in_every_common_shape() {
        let spec = json!({"error": {"code": "INVALID_FIELD", "message": "must be lower case",
            "field": "data.client.firstname"}});
        assert_eq!(
            error_words(&spec, None).unwrap(),
            "INVALID_FIELD: must be lower case (field data.client.firstname)"
        );
        assert_eq!(
            error_words(&json!({"error": "not allowed"}), None).unwrap(),
            "not allowed"
        );
        assert_eq!(
            error_words(
                &json!({"errors": [{"field": "id", "message": "unknown"}]}),
                None
            )
            .unwrap(),
            "id: unknown"
        );
    }

    #[test]
    fn json_api_errors_keep_code_and_source_and_a_problem_says_its_detail_once() {
        let json_api = json!({"errors": [{"status": "422", "code": "invalid_format",
            "detail": "must be a decimal string", "source": {"pointer": "/data/trips/0/price/amount"}}]});
        assert_eq!(
            error_words(&json_api, None).unwrap(),
            "invalid_format: must be a decimal string (field /data/trips/0/price/amount)"
        );
        let problem = json!({"title": "INVALID_FIELD", "status": 400, "detail": "must be lower case",
            "invalid-params": [{"name": "data.client.firstname", "reason": "must be lower case"}]});
        let words = error_words(&problem, Some("application/problem+json")).unwrap();
        assert_eq!(
            words,
            "INVALID_FIELD: must be lower case (field data.client.firstname)"
        );
    }

    #[test]
    fn ordinary_answers_are_not_errors() {
        for body in [
            json!({"data": {"id": "q1", "reference": "R"}}),
            json!({"error": null, "id": 3}),
            json!([]),
            json!(null),
        ] {
            assert_eq!(error_words(&body, Some("application/json")), None, "{body}");
        }
        assert_eq!(describe(&Value::Null, None), "an empty body");
        assert!(describe(&json!({"x": 1}), None).starts_with("the answer was: "));
    }

    /// The scan that passes over ordinary answers says what the whole parse says.
    #[test]
    fn the_text_of_a_body_gives_the_words_of_its_value() {
        for body in [
            json!({"data": {"id": "q1", "status": "active", "error": "inside"}}),
            json!({"error": null, "id": 3}),
            json!({"error": {"code": "E", "message": "no"}}),
            json!({"errors": ["a", "b"]}),
            json!({"errors": {"field": "bad"}}),
            json!({"title": "Bad", "detail": "worse", "status": 400}),
            json!({"title": "Only a title"}),
            json!({"type": "about:blank", "id": 1}),
            json!([{"error": "in a list"}]),
            json!("error"),
            json!(7),
            json!(null),
        ] {
            let text = serde_json::to_string(&body).unwrap();
            for content_type in [None, Some("application/problem+json")] {
                assert_eq!(
                    error_words_in(&text, content_type),
                    error_words(&body, content_type),
                    "{text}"
                );
            }
        }
        let escaped = r#"{"\u0065rror": "spelled with an escape"}"#;
        assert_eq!(
            error_words_in(escaped, None).as_deref(),
            Some("spelled with an escape")
        );
        assert_eq!(error_words_in("not json", None), None);
    }

    #[test]
    fn excerpts_cut_on_a_character_boundary() {
        let long = "é".repeat(400);
        let cut = excerpt(&json!(long));
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}

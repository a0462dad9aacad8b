//! A partner's request held to its configured endpoint rather than the spec's flat body: the
//! media type the endpoint sends, the skeleton its body template adds around the spec's
//! fields (a JSON:API document's `data.type` and `data.attributes`), a JSON Patch's
//! operations, a multipart body's parts; and the spec's view of such a body (the attributes,
//! the claim part, the patched values) for the spec's rules and the session's sequencing.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::json::{field_paths, has_path};
use crate::endpoints::{Endpoints, PartContent, Payload, is_json};
use crate::models::Operation;
use crate::record::Check;

pub(crate) const CONFIGURED_MEDIA_TYPE: &str = "request has the configured media type";
pub(crate) const CONFIGURED_FORM: &str = "request has the configured endpoint's form";

/// What one configured endpoint sends, when it is not the spec's JSON body.
#[derive(Debug, Clone)]
pub(super) struct Configured {
    /// The media type's essence (`application/vnd.api+json`, `multipart/form-data`).
    media_type: String,
    form: Form,
}

#[derive(Debug, Clone)]
enum Form {
    /// JSON: the paths the template adds around the spec's fields (empty when the template
    /// cannot render without them), and whether it is an array (a JSON Patch).
    Json {
        skeleton: Vec<String>,
        array: bool,
    },
    Text,
    /// The parts by name, each JSON one with its skeleton.
    Multipart {
        parts: Vec<(String, Option<Vec<String>>)>,
    },
}

fn essence(media_type: &str) -> String {
    let essence = media_type.split(';').next().unwrap_or("");
    essence.trim().to_ascii_lowercase()
}

/// Every operation whose configured body or media type is not the spec's JSON, as it sends.
pub(super) fn configured(endpoints: &Endpoints) -> HashMap<Operation, Configured> {
    let mut out = HashMap::new();
    for op in Operation::ALL {
        let (mut context, default) = crate::endpoints::context::sample(op);
        let media_type = essence(&endpoints.media_type(op, &context));
        let unshown = matches!(op, Operation::QuoteDeletion | Operation::FlightCancellation);
        if media_type == "application/json" && (unshown || !endpoints.has_body_template(op)) {
            continue;
        }
        // Rendered with an empty `request`: what remains is what the template adds.
        context["request"] = json!({"data": {}});
        let bare = endpoints.body(op, &context, default.clone()).ok().flatten();
        if let Some(request) = &default {
            context["request"] = request.clone();
        }
        // A call that sends no body (a deletion, a read) has no form or media type to judge.
        let Some(full) = endpoints.body(op, &context, default).ok().flatten() else {
            continue;
        };
        let form = match (full, bare) {
            (Payload::Multipart(full), bare) => {
                let bare = match bare {
                    Some(Payload::Multipart(m)) => m.parts,
                    _ => Vec::new(),
                };
                let parts = (full.parts.iter())
                    .map(|p| {
                        let bare = bare.iter().find(|b| b.name == p.name);
                        let skeleton = bare.and_then(|b| match &b.content {
                            PartContent::Json(value) => Some(paths(value)),
                            _ => None,
                        });
                        let json = is_json(&p.content_type).then(|| skeleton.unwrap_or_default());
                        (p.name.clone(), json)
                    })
                    .collect();
                Form::Multipart { parts }
            }
            (Payload::Json(full), bare) => Form::Json {
                skeleton: match bare {
                    Some(Payload::Json(bare)) => paths(&bare),
                    _ => Vec::new(),
                },
                array: full.is_array(),
            },
            (Payload::Text(_), _) => Form::Text,
        };
        let media_type = match form {
            Form::Multipart { .. } => "multipart/form-data".to_string(),
            _ => media_type,
        };
        out.insert(op, Configured { media_type, form });
    }
    out
}

fn paths(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    field_paths(value, "", &mut out);
    out
}

impl Configured {
    /// Whether the spec's rules apply to the request's view: not to a patch or plain text.
    pub(super) fn spec_rules_apply(&self) -> bool {
        match &self.form {
            Form::Json { array, .. } => !array,
            Form::Text => false,
            Form::Multipart { parts } => parts.iter().any(|(_, json)| json.is_some()),
        }
    }

    /// The checks of the request's media type and form against the configured endpoint.
    pub(super) fn judge(&self, content_type: Option<&str>, body: &[u8]) -> Vec<Check> {
        let media = self.media_check(content_type);
        media
            .into_iter()
            .chain([self.form_check(content_type, body)])
            .collect()
    }

    /// The request's media type against the one configured, when one other than the spec's
    /// `application/json` is (a partner sending JSON without saying so was never failed).
    pub(super) fn media_check(&self, content_type: Option<&str>) -> Option<Check> {
        if self.media_type == "application/json" {
            return None;
        }
        let sent = content_type.map(essence).unwrap_or_default();
        Some(if sent == self.media_type {
            Check::pass(CONFIGURED_MEDIA_TYPE, format!("sent as {sent}"))
        } else {
            let shown = if sent.is_empty() {
                "no Content-Type"
            } else {
                &sent
            };
            let detail = format!("sent as {shown}; the endpoint sends {}", self.media_type);
            Check::fail(CONFIGURED_MEDIA_TYPE, detail)
        })
    }

    fn form_check(&self, content_type: Option<&str>, body: &[u8]) -> Check {
        let problem = match &self.form {
            Form::Text => None,
            Form::Json { skeleton, array } => match serde_json::from_slice::<Value>(body) {
                Err(e) => Some(format!("not JSON: {e}")),
                Ok(value) => json_problem(&value, skeleton, *array, "$"),
            },
            Form::Multipart { parts } => multipart_problem(parts, content_type, body),
        };
        match problem {
            None => Check::pass(CONFIGURED_FORM, "as the configured endpoint sends it"),
            Some(problem) => Check::fail(CONFIGURED_FORM, problem),
        }
    }
}

fn json_problem(value: &Value, skeleton: &[String], array: bool, at: &str) -> Option<String> {
    if array {
        let Some(ops) = value.as_array() else {
            return Some(format!(
                "{at}: not an array of operations, as the configured body is"
            ));
        };
        let bad = ops
            .iter()
            .position(|op| !op["op"].is_string() || !op["path"].is_string());
        return bad.map(|i| format!("{at}[{i}]: a JSON Patch operation has op and path"));
    }
    let missing: Vec<&str> = (skeleton.iter())
        .filter(|path| !has_path(value, path))
        .map(String::as_str)
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{at}.{}: not sent, though the configured body has it",
            missing.join(", {at}.")
        )
    })
}

fn multipart_problem(
    parts: &[(String, Option<Vec<String>>)],
    content_type: Option<&str>,
    body: &[u8],
) -> Option<String> {
    let boundary = content_type.and_then(crate::sandbox::multipart::boundary)?;
    let sent = match crate::sandbox::multipart::parse(body, &boundary) {
        Ok(sent) => sent,
        Err(e) => return Some(format!("not multipart/form-data: {e}")),
    };
    for (name, skeleton) in parts {
        let Some(part) = sent.iter().find(|p| &p.name == name) else {
            return Some(format!(
                "no part named {name}, though the configured body has one"
            ));
        };
        if let Some(skeleton) = skeleton {
            let at = format!("part {name}: $");
            let problem = match serde_json::from_slice::<Value>(&part.bytes) {
                Err(e) => Some(format!("part {name}: not JSON: {e}")),
                Ok(value) => json_problem(&value, skeleton, false, &at),
            };
            if problem.is_some() {
                return problem;
            }
        }
    }
    None
}

/// The spec's view of a partner's body ([`parsed_view`]'s first half).
#[cfg(test)]
pub(super) fn view(body: &[u8]) -> Value {
    parsed_view(body).0
}

/// The spec's view of a partner's body: a JSON:API document's attributes under `data`, a
/// multipart body's first JSON part (so viewed), a JSON Patch's top-level values under `data`;
/// any other JSON as it is. And whether the view is the body itself as parsed (plain JSON
/// with `data`): then the spec's rules may judge the view instead of parsing the body again.
pub(super) fn parsed_view(body: &[u8]) -> (Value, bool) {
    if let Some(boundary) = sniffed_boundary(body)
        && let Ok(parts) = crate::sandbox::multipart::parse(body, &boundary)
    {
        let json = parts
            .iter()
            .find_map(|p| serde_json::from_slice::<Value>(&p.bytes).ok());
        return (json.map(unwrapped).unwrap_or(Value::Null), false);
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(value) if is_plain(&value) => (value, true),
        Ok(value) => (unwrapped(value), false),
        Err(_) => (Value::Null, false),
    }
}

/// A body [`unwrapped`] gives back as it is: an object with `data` that is not a JSON:API
/// document's.
fn is_plain(value: &Value) -> bool {
    let Some(data) = value.get("data") else {
        return false;
    };
    !(data["type"].is_string() && data.get("attributes").is_some_and(Value::is_object))
}

/// A multipart body opens with its boundary line. Any other body is passed over at its first
/// two bytes: looking for the end of its first line read all of a megabyte of JSON written
/// on one line, byte by byte, then checked it as UTF-8.
fn sniffed_boundary(body: &[u8]) -> Option<String> {
    if !body.starts_with(b"--") {
        return None;
    }
    let line = body.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end_matches('\r');
    line.strip_prefix("--")
        .filter(|b| !b.is_empty())
        .map(str::to_string)
}

/// The spec's view of a parsed body, taken apart rather than copied: a body of a megabyte is
/// held once.
fn unwrapped(mut value: Value) -> Value {
    if let Value::Array(ops) = &mut value {
        let mut data = serde_json::Map::new();
        for op in ops {
            let path = op["path"].as_str().unwrap_or("");
            if let Some(key) =
                (path.strip_prefix('/').filter(|key| !key.contains('/'))).map(str::to_string)
                && let Some(v) = op.get_mut("value")
            {
                data.insert(key, v.take());
            }
        }
        return json!({ "data": data });
    }
    if !(value.is_object() || value.is_null()) {
        // Indexing a string or a number by key would panic.
        return value;
    }
    let data = &mut value["data"];
    match (data["type"].is_string(), data.get_mut("attributes")) {
        (true, Some(attributes)) if attributes.is_object() => json!({ "data": attributes.take() }),
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_view_of_json_api_patches_and_multipart() {
        let doc = br#"{"data": {"type": "quotes", "attributes": {"currency": "EUR"}}}"#;
        assert_eq!(view(doc), json!({"data": {"currency": "EUR"}}));
        let patch = br#"[{"op": "replace", "path": "/quotes", "value": [{"id": "q"}]}]"#;
        assert_eq!(view(patch), json!({"data": {"quotes": [{"id": "q"}]}}));
        let multipart = b"--b1\r\nContent-Disposition: form-data; name=\"claim\"\r\n\r\n{\"data\": {\"type\": \"claims\", \"attributes\": {\"claimDate\": \"2027-01-01\"}}}\r\n--b1--\r\n";
        assert_eq!(
            view(multipart),
            json!({"data": {"claimDate": "2027-01-01"}})
        );
        assert_eq!(view(br#"{"data": {"a": 1}}"#), json!({"data": {"a": 1}}));
    }

    /// The view is said to be the body as parsed only when it is, so judging the view in
    /// place of the bytes changes nothing; a body without `data` is viewed with a null one.
    #[test]
    fn the_view_is_the_parsed_body_only_when_it_is() {
        let bodies: [&[u8]; 10] = [
            br#"{"data": {"a": 1}, "b": 2}"#,
            br#"{"data": 5}"#,
            br#"{"data": {"type": 1, "attributes": {}}}"#,
            br#"{"data": {"type": "q", "attributes": 5}}"#,
            br#"{"data": {"type": "q", "attributes": {"a": 1}}}"#,
            br#"{"b": 2}"#,
            b"{}",
            b"null",
            br#"[{"op": "replace", "path": "/a", "value": 1}]"#,
            b"{not json",
        ];
        for (i, body) in bodies.iter().enumerate() {
            let (view, parsed) = parsed_view(body);
            let as_parsed = serde_json::from_slice::<Value>(body).ok();
            assert_eq!(parsed, i < 4, "{i}");
            assert_eq!(parsed, as_parsed.as_ref() == Some(&view), "{i}");
        }
        assert_eq!(view(b"{}"), json!({"data": null}));
        assert_eq!(
            sniffed_boundary(b"--b1\r\nContent-Disposition: x").as_deref(),
            Some("b1")
        );
        for not_multipart in [&b"{\"a\": \"--b1\"}\n"[..], b" --b1\n", b"--\n", b"-"] {
            assert_eq!(sniffed_boundary(not_multipart), None);
        }
        for scalar in ["5", "\"text\"", "true"] {
            assert_eq!(view(scalar.as_bytes()).to_string(), scalar);
        }
    }

    /// The proxy holds a quote to the configured JSON:API form and media type: the spec's
    /// flat body as application/json fails both; the configured document passes both.
    #[test]
    fn a_request_is_held_to_the_configured_form_and_media_type() {
        use std::collections::BTreeMap;
        let table = crate::endpoints::EndpointOverride {
            body: Some(
                r#"{"data": {"type": "quotes", "attributes": {{ request.data | tojson }}}}"#.into(),
            ),
            headers: BTreeMap::from([("Content-Type".into(), "application/vnd.api+json".into())]),
            ..Default::default()
        };
        let overrides = BTreeMap::from([("quote".to_string(), table)]);
        let endpoints = crate::dialect::spec_with(&overrides).unwrap();
        let configured = configured(&endpoints);
        let quote = &configured[&Operation::Quote];
        assert!(
            !configured.contains_key(&Operation::Subscription),
            "the spec's JSON"
        );
        let failed = |checks: Vec<Check>| -> Vec<String> {
            (checks.into_iter())
                .filter(|c| !c.passed)
                .map(|c| c.name)
                .collect()
        };
        let flat = br#"{"data": {"currency": "EUR", "trips": []}}"#;
        assert_eq!(
            failed(quote.judge(Some("application/json"), flat)),
            [CONFIGURED_MEDIA_TYPE, CONFIGURED_FORM]
        );
        let document = br#"{"data": {"type": "quotes", "attributes": {"currency": "EUR"}}}"#;
        let sent = Some("application/vnd.api+json; charset=utf-8");
        assert!(failed(quote.judge(sent, document)).is_empty());
    }
}

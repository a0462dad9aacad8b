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

/// The staging's name of a field (`/data/trips/0/price/amount`, `#/data/bookingNumber`,
/// `$.data.airline`, `data.trips[0].price.amount`) as its segments.
fn segments(field: &str) -> Vec<String> {
    let field = field.trim().trim_start_matches('#').trim_start_matches('$');
    if field.starts_with('/') {
        return (field.split('/').filter(|s| !s.is_empty()))
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
    }
    (field.split(['.', '[', ']']).filter(|s| !s.is_empty()))
        .map(|s| s.trim_matches(['\'', '"']).to_string())
        .collect()
}

/// A template expression for the value at `path` (segments from the context's root).
fn expression(path: &[String]) -> String {
    let mut out = String::new();
    for segment in path {
        let plain = segment
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if segment.parse::<usize>().is_ok() {
            out.push_str(&format!("[{segment}]"));
        } else if plain {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(segment);
        } else {
            out.push_str(&format!("[{segment:?}]"));
        }
    }
    out
}

/// A name compared as the staging and the spec may spell it: case, `_` and `-` aside.
fn folded(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Where the value a refused field should carry comes from in the call's template context:
/// the spec's body (`request`) at the same place, else the key that spells the field's name
/// longer (`airline` is `airlineIata`), in `request` first, then in the rest of the context.
fn source_of(segments: &[String], context: &Value) -> Option<String> {
    let mut at_request = vec!["request".to_string()];
    at_request.extend(segments.iter().cloned());
    let pointer: String = at_request.iter().map(|s| format!("/{s}")).collect();
    if context.pointer(&pointer).is_some() {
        return Some(expression(&at_request));
    }
    let wanted = folded(segments.last()?);
    let mut found: Vec<(u8, usize, Vec<String>)> = Vec::new();
    find_key(context, &mut Vec::new(), &wanted, &mut found);
    found.sort_by_key(|(rank, depth, _)| (*rank, *depth));
    found.first().map(|(_, _, path)| expression(path))
}

fn find_key(
    value: &Value,
    path: &mut Vec<String>,
    wanted: &str,
    found: &mut Vec<(u8, usize, Vec<String>)>,
) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if path.is_empty() && matches!(key.as_str(), "captured" | "idempotency_key") {
                    continue;
                }
                path.push(key.clone());
                let name = folded(key);
                let scalar = !inner.is_object() && !inner.is_array();
                if scalar && (name == wanted || name.starts_with(wanted)) {
                    let in_request = path.first().is_some_and(|p| p == "request");
                    let rank = u8::from(name != wanted) + 2 * u8::from(!in_request);
                    found.push((rank, path.len(), path.clone()));
                }
                find_key(inner, path, wanted, found);
                path.pop();
            }
        }
        Value::Array(items) => {
            if let Some(first) = items.first() {
                path.push("0".into());
                find_key(first, path, wanted, found);
                path.pop();
            }
        }
        _ => {}
    }
}

/// A setting a refusal points at, or the words that say what the staging wants where no
/// setting gives it. Every setting is checked as `ppcert validate` checks a `ppcert.toml`
/// before it is proposed ([`Proposal::snippet`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Proposal {
    /// A header every call needs; the user knows its value.
    Header { name: String },
    /// A key for each write, sent per endpoint: a constant would be a reused key.
    IdempotencyKey { op: Operation },
    /// A field the staging wants as a decimal string: the value, from where it comes.
    AsString {
        op: Operation,
        field: String,
        expression: String,
    },
    /// A field the staging does not know: another dialect, or a body of the user's own.
    UnknownField {
        op: Operation,
        field: String,
        words: String,
    },
    /// A refused field and where its value comes from in the call's context.
    Source {
        op: Operation,
        field: String,
        words: String,
        expression: String,
    },
    /// A refused booking number: ppcert generates it, as `[data] booking_number_pattern` says.
    BookingNumber { field: String, words: String },
    /// A refused field whose value nothing in the call's context gives: words only.
    Field {
        op: Operation,
        field: String,
        words: String,
    },
}

/// The example pattern a booking-number proposal shows (and is checked with).
const PATTERN_EXAMPLE: &str = "[A-Z]{2}[0-9]{8}";

impl Proposal {
    /// The proposal for the user, in one line.
    pub(crate) fn line(&self) -> String {
        match self {
            Proposal::Header { name } => format!(
                "the staging wants the header {name} on every call: add `[target.headers] {name} = \"...\"` to ppcert.toml (or pass `--header \"{name}: ...\"`)"
            ),
            Proposal::IdempotencyKey { op } => format!(
                "the staging wants an Idempotency-Key on each {op}: add `[endpoints.{op}.headers] Idempotency-Key = \"{{{{ idempotency_key }}}}\"` (one key per write, the same on its retries; never a constant, which the staging would refuse as reused)"
            ),
            Proposal::AsString {
                op,
                field,
                expression,
            } => format!(
                "the staging wants `{field}` as a decimal string: spell it so in `[endpoints.{op}] body`, e.g. `\"{{{{ {expression} | string }}}}\"` where the value goes"
            ),
            Proposal::UnknownField { op, field, words } => format!(
                "the staging does not know `{field}` ({words}): try `--dialect provider-docs`, or spell the body in `[endpoints.{op}] body`"
            ),
            Proposal::Source {
                op,
                field,
                words,
                expression,
            } => format!(
                "the staging refused `{field}` ({words}): `[endpoints.{op}] body` sets how it is sent (its value is `{{{{ {expression} }}}}`)"
            ),
            Proposal::BookingNumber { field, words } => format!(
                "the staging refused `{field}` ({words}): ppcert generates booking numbers; set `[data] booking_number_pattern = \"REGEX\"` to the staging's shape (e.g. `{PATTERN_EXAMPLE}`)"
            ),
            Proposal::Field { op, field, words } => format!(
                "the staging refused `{field}` ({words}): `[endpoints.{op}] body` sets how it is sent"
            ),
        }
    }

    /// The setting as a `ppcert.toml` holds it (an expression in a body of its own), for
    /// `validate`'s check; `None` where only words are proposed.
    pub(crate) fn snippet(&self) -> Option<String> {
        let body = |op: &Operation, value: String| {
            format!("[endpoints.{op}]\nbody = \'\'\'{{\"value\": {value}}}\'\'\'\n")
        };
        match self {
            Proposal::Header { name } => Some(format!("[target.headers]\n{name:?} = \"...\"\n")),
            Proposal::IdempotencyKey { op } => Some(format!(
                "[endpoints.{op}.headers]\nIdempotency-Key = \"{{{{ idempotency_key }}}}\"\n"
            )),
            Proposal::AsString { op, expression, .. } => Some(body(
                op,
                format!("{{{{ {expression} | string | tojson }}}}"),
            )),
            Proposal::Source { op, expression, .. } => {
                Some(body(op, format!("{{{{ {expression} | tojson }}}}")))
            }
            Proposal::UnknownField { .. } => {
                Some("[target]\ndialect = \"provider-docs\"\n".to_string())
            }
            Proposal::BookingNumber { .. } => Some(format!(
                "[data]\nbooking_number_pattern = \"{PATTERN_EXAMPLE}\"\n"
            )),
            Proposal::Field { .. } => None,
        }
    }

    /// Whether `validate` takes the setting (a proposal it would refuse is never shown).
    pub(crate) fn valid(&self) -> bool {
        self.snippet()
            .is_none_or(|text| crate::config::parse_file("the proposal", &text).is_ok())
    }
}

/// What one item of a refusal of `op` proposes, given the call's template context.
fn proposal(op: Operation, item: &Said, context: &Value) -> Option<Proposal> {
    let header = item.header.clone().or_else(|| needed_header(&item.words));
    let lower = item.words.to_ascii_lowercase();
    if let Some(name) = header {
        if name.eq_ignore_ascii_case("idempotency-key") {
            return Some(Proposal::IdempotencyKey { op });
        }
        return Some(Proposal::Header { name });
    }
    let field = item.field.clone()?;
    let segments = segments(&field);
    let words = item.words.clone();
    if segments
        .last()
        .is_some_and(|s| folded(s) == "bookingnumber")
        && !(lower.contains("not a field") || lower.contains("unknown field"))
    {
        return Some(Proposal::BookingNumber { field, words });
    }
    let source = source_of(&segments, context);
    Some(match source {
        _ if lower.contains("not a field") || lower.contains("unknown field") => {
            Proposal::UnknownField { op, field, words }
        }
        Some(expression)
            if lower.contains("decimal string") || lower.contains("must be a string") =>
        {
            Proposal::AsString {
                op,
                field,
                expression,
            }
        }
        Some(expression) => Proposal::Source {
            op,
            field,
            words,
            expression,
        },
        None => Proposal::Field { op, field, words },
    })
}

/// The settings a refusal of `op` points at, each one `validate` takes; empty when it names
/// none. `context` is the call's template context (`request`: the spec's body, if any).
pub(super) fn proposals(op: Operation, body: &Value, context: &Value) -> Vec<Proposal> {
    let mut out: Vec<Proposal> = Vec::new();
    for item in said(body) {
        let Some(proposal) = proposal(op, &item, context) else {
            continue;
        };
        if proposal.valid() && !out.contains(&proposal) {
            out.push(proposal);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datagen::{DataProfile, Generator};
    use crate::endpoints::context::{Known, call_context};
    use crate::models::Envelope;
    use serde_json::json;

    /// A call's template context as the probe builds it: the booking's, and `request`.
    fn context(op: Operation) -> Value {
        let start = chrono::Utc::now();
        let generator = Generator::new(
            1,
            crate::datagen::run_id(start, 1),
            start,
            DataProfile::default(),
        );
        let booking = generator.booking(0);
        let mut context = call_context(&booking, &Known::default());
        if op == Operation::Quote {
            context["request"] = json!(Envelope {
                data: booking.quote_request(0, false)
            });
        }
        context
    }

    fn lines(op: Operation, body: &Value) -> Vec<String> {
        let found = proposals(op, body, &context(op));
        found.iter().map(Proposal::line).collect()
    }

    #[test]
    fn a_missing_header_in_words_or_in_a_json_api_source_names_the_setting() {
        let words = json!({"errors": [{"detail": "this API needs the header X-Api-Version"}]});
        let source =
            json!({"errors": [{"code": "missing", "source": {"header": "X-Api-Version"}}]});
        for body in [words, source] {
            let lines = lines(Operation::Quote, &body);
            assert_eq!(lines.len(), 1, "{lines:?}");
            assert!(
                lines[0].contains("[target.headers] X-Api-Version"),
                "{lines:?}"
            );
        }
    }

    #[test]
    fn an_idempotency_key_is_proposed_per_endpoint_never_as_a_constant() {
        let body =
            json!({"errors": [{"code": "missing", "source": {"header": "Idempotency-Key"}}]});
        let found = proposals(
            Operation::Subscription,
            &body,
            &context(Operation::Subscription),
        );
        assert_eq!(
            found,
            [Proposal::IdempotencyKey {
                op: Operation::Subscription
            }]
        );
        let line = found[0].line();
        assert!(
            line.contains(
                "[endpoints.subscription.headers] Idempotency-Key = \"{{ idempotency_key }}\""
            ),
            "{line}"
        );
        assert!(!line.contains("[target.headers]"), "{line}");
    }

    #[test]
    fn a_field_format_names_the_field_and_the_template_that_sends_it() {
        let problem = json!({"title": "Invalid", "detail": "the request is invalid",
            "invalid-params": [{"name": "data.trips[0].price.amount", "reason": "must be a decimal string"}]});
        let pointer = json!({"errors": [{"detail": "must be a decimal string",
            "source": {"pointer": "/data/trips/0/price/amount"}}]});
        for body in [problem, pointer] {
            let lines = lines(Operation::Quote, &body);
            assert!(
                lines.iter().any(|l| l.contains("[endpoints.quote] body")
                    && l.contains("request.data.trips[0].price.amount | string")),
                "{lines:?}"
            );
        }
    }

    #[test]
    fn a_refused_field_names_its_real_source_and_a_booking_number_its_pattern() {
        let airline = json!({"error": {"message": "unknown airline", "field": "data.airline"}});
        let airline = lines(Operation::FlightCancellation, &airline);
        assert!(
            airline
                .iter()
                .any(|l| l.contains("{{ flight.airlineIata }}")),
            "{airline:?}"
        );
        let number = json!({"errors": [{"detail": "does not match the booking number format",
            "source": {"pointer": "#/data/bookingNumber"}}]});
        let said = lines(Operation::Subscription, &number);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("[data] booking_number_pattern"),
            "{said:?}"
        );
        assert!(!said[0].contains("request."), "{said:?}");
    }

    /// Every kind of proposal the probe can print, as a refusal gives it: each one's setting
    /// is taken by `validate` (a `ppcert.toml` holding just that setting loads).
    #[test]
    fn every_kind_of_proposal_passes_validate() {
        let cases = [
            (
                Operation::Quote,
                json!({"errors": [{"source": {"header": "X-Api-Version"}, "code": "missing"}]}),
            ),
            (
                Operation::Claim,
                json!({"errors": [{"source": {"header": "Idempotency-Key"}, "code": "missing"}]}),
            ),
            (
                Operation::Quote,
                json!({"errors": [{"detail": "must be a decimal string", "source": {"pointer": "/data/trips/0/price/amount"}}]}),
            ),
            (
                Operation::Quote,
                json!({"errors": [{"detail": "'birthdate' is not a field of this API", "source": {"pointer": "/data/trips/0/travelers/0/birthdate"}}]}),
            ),
            (
                Operation::FlightCancellation,
                json!({"error": {"message": "unknown airline", "field": "airline"}}),
            ),
            (
                Operation::Subscription,
                json!({"errors": [{"detail": "bad format", "source": {"pointer": "#/data/bookingNumber"}}]}),
            ),
            (
                Operation::Quote,
                json!({"errors": [{"detail": "required", "source": {"pointer": "/data/channel"}}]}),
            ),
        ];
        let mut kinds = std::collections::HashSet::new();
        for (op, body) in cases {
            let found = proposals(op, &body, &context(op));
            assert_eq!(found.len(), 1, "{op}: {body}: {found:?}");
            let proposal = &found[0];
            kinds.insert(std::mem::discriminant(proposal));
            if let Some(text) = proposal.snippet() {
                let loaded = crate::config::parse_file("ppcert.toml", &text);
                assert!(loaded.is_ok(), "{text}\n{:?}", loaded.err());
            }
            // Every kind is walked: a new kind must be added here.
            match proposal {
                Proposal::Header { .. }
                | Proposal::IdempotencyKey { .. }
                | Proposal::AsString { .. }
                | Proposal::UnknownField { .. }
                | Proposal::Source { .. }
                | Proposal::BookingNumber { .. }
                | Proposal::Field { .. } => {}
            }
        }
        assert_eq!(kinds.len(), 7, "each case gives a kind of its own");
    }

    #[test]
    fn a_setting_validate_refuses_is_never_proposed() {
        let body = json!({"errors": [{"source": {"header": "Authorization"}, "code": "missing"}]});
        assert!(proposals(Operation::Quote, &body, &context(Operation::Quote)).is_empty());
        let typo = Proposal::Source {
            op: Operation::Quote,
            field: "x".into(),
            words: "bad".into(),
            expression: "request.data.nothing".into(),
        };
        assert!(!typo.valid());
    }

    #[test]
    fn words_that_name_nothing_propose_nothing() {
        let none = |body: Value| proposals(Operation::Quote, &body, &Value::Null).is_empty();
        assert!(none(json!({"error": {"message": "try later"}})));
        assert!(none(json!({"detail": "the header is fine"})));
    }
}

//! The template environments of endpoint paths, bodies, headers and captures, and the strict
//! check that every attribute a template names exists in the context the call will get: a
//! misspelt `{{ flight.airline_iata | tojson }}` is an error before anything is sent, never a
//! `null` sent after the run's writes.

use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior, Value as Context};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_json::Value;

/// Instructions one rendering may run: far more than any real body needs, few enough that a
/// runaway loop in a template ends in an error in milliseconds instead of hanging the run.
pub(super) const TEMPLATE_FUEL: u64 = 1_000_000;

/// Characters escaped in a path segment (RFC 3986 pchar complement).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'\\')
    .add(b'^')
    .add(b'|');

/// `tojson` that refuses an undefined value: minijinja's own writes `null` for it, even in
/// strict mode, which would send a typo as a null field.
fn strict_tojson(
    value: &Context,
    indent: Option<Context>,
    args: minijinja::value::Kwargs,
) -> Result<Context, Error> {
    if value.is_undefined() {
        return Err(Error::new(
            ErrorKind::UndefinedError,
            "tojson of an undefined value (a misspelt attribute?)",
        ));
    }
    minijinja::filters::tojson(value, indent, args)
}

/// A strict environment; `encode_values` percent-encodes every inserted value (paths).
pub(super) fn environment(encode_values: bool) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(TEMPLATE_FUEL));
    env.add_filter("tojson", strict_tojson);
    super::dates::register(&mut env);
    env.add_filter("utc", super::utc::utc);
    if encode_values {
        env.set_formatter(|out, _state, value| {
            let text = value
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| value.to_string());
            // A value of `.` or `..` would be a dot segment the URL resolves away, escaping
            // its place in the path: encoded, it stays one segment.
            let encoded = match text.as_str() {
                "." => "%2E".to_string(),
                ".." => "%2E%2E".to_string(),
                _ => utf8_percent_encode(&text, SEGMENT).to_string(),
            };
            out.write_str(&encoded)
                .map_err(|_| Error::new(ErrorKind::WriteFailure, "write failed"))
        });
    }
    env
}

/// Renders a capture template with only `product_type` known, to check its JSONPath syntax.
pub(super) fn lenient_render(template: &str, product_type: &str) -> Result<String, Error> {
    let mut lenient = Environment::new();
    lenient.set_undefined_behavior(UndefinedBehavior::Lenient);
    lenient.set_fuel(Some(TEMPLATE_FUEL));
    lenient.render_str(
        template,
        minijinja::context! { product_type => product_type },
    )
}

/// The first variable or attribute `template` names that `context` does not hold, as written
/// (`flight.airline_iata`). Attributes below a list or a scalar are not followed: their
/// shape is the data's, not the context's.
pub(super) fn unknown_attribute(
    env: &Environment<'static>,
    name: &str,
    context: &Value,
) -> Option<String> {
    let template = env.get_template(name).ok()?;
    let source = template.source().to_string();
    let mut names: Vec<String> = template.undeclared_variables(true).into_iter().collect();
    names.sort();
    // `request` is the body the spec would send, shaped by the data (a refusal case leaves a
    // field out on purpose, and templates test for it with `is defined`): not the context's.
    // minijinja's own functions are not context names, and a name the template itself guards
    // (`is defined`, `| default`) may be absent on purpose.
    names
        .into_iter()
        .filter(|dotted| {
            let root = dotted.split('.').next().unwrap_or_default();
            root != "request" && !BUILTIN_GLOBALS.contains(&root) && !guarded(&source, dotted)
        })
        .find(|dotted| !resolves(context, dotted))
}

/// What the mapping `dotted` was looked up in holds, for an error naming a typo:
/// `flight has airlineIata, arrivalDate, …`, or the context's own names for a variable.
pub(super) fn what_is_there(
    context: &Value,
    dotted: &str,
    op: crate::models::Operation,
) -> Box<str> {
    const SHOWN: usize = 12;
    let parts: Vec<&str> = dotted.split('.').collect();
    let mut here = context;
    let mut depth = 0;
    for part in &parts[..parts.len().saturating_sub(1)] {
        match here.get(part) {
            Some(next) if next.is_object() => {
                here = next;
                depth += 1;
            }
            _ => break,
        }
    }
    let Value::Object(map) = here else {
        return format!("{} is not a mapping", parts[..depth].join(".")).into();
    };
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    let more = keys.len() > SHOWN;
    let mut listed = keys.into_iter().take(SHOWN).collect::<Vec<_>>().join(", ");
    if more {
        listed.push_str(", …");
    }
    let there = match depth {
        0 => format!("the context of {op} has {listed}"),
        _ => format!("{} has {listed}", parts[..depth].join(".")),
    };
    there.into()
}

/// Whether `dotted`, as `source` uses it, is guarded there or held by `context`.
pub(super) fn names_resolve(source: &str, dotted: &str, context: &Value) -> bool {
    let root = dotted.split('.').next().unwrap_or_default();
    BUILTIN_GLOBALS.contains(&root) || guarded(source, dotted) || resolves(context, dotted)
}

/// The `captured.NAME` values a template reads unguarded (a `captured.x is defined` test or
/// a `| default` reads nothing it needs): each NAME once.
pub(super) fn captured_reads(env: &Environment<'static>, name: &str) -> Vec<String> {
    let Ok(template) = env.get_template(name) else {
        return Vec::new();
    };
    let source = template.source().to_string();
    captured_in(&source, template.undeclared_variables(true))
}

/// The `captured.NAME` among `names` (dotted, as minijinja gives them) that `source` does
/// not guard.
pub(super) fn captured_in(source: &str, names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut found: Vec<String> = names
        .into_iter()
        .filter(|dotted| !guarded(source, dotted))
        .filter_map(|dotted| {
            let mut parts = dotted.split('.');
            (parts.next() == Some("captured"))
                .then(|| parts.next().map(str::to_string))
                .flatten()
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// minijinja's global functions, the names its blocks define, and ppcert's `env` (checked
/// against the environment when the staging is resolved).
const BUILTIN_GLOBALS: [&str; 12] = [
    "env",
    "range",
    "dict",
    "namespace",
    "debug",
    "lipsum",
    "cycler",
    "joiner",
    "loop",
    "self",
    "varargs",
    "kwargs",
];

/// Whether `source` tests `dotted` (or a name it lies under) for being defined, or gives it a
/// default, before use.
fn guarded(source: &str, dotted: &str) -> bool {
    let compact: String = source.split_whitespace().collect::<Vec<_>>().join(" ");
    let parts: Vec<&str> = dotted.split('.').collect();
    (1..=parts.len()).any(|n| guards(&compact, &parts[..n].join(".")))
}

fn guards(compact: &str, dotted: &str) -> bool {
    [
        format!("{dotted} is defined"),
        format!("{dotted} is not defined"),
        format!("{dotted} is undefined"),
        format!("{dotted} | default"),
        format!("{dotted}|default"),
        format!("{dotted} | d("),
        format!("{dotted}|d("),
    ]
    .iter()
    .any(|guard| compact.contains(guard.as_str()))
}

fn resolves(context: &Value, dotted: &str) -> bool {
    let mut here = context;
    for part in dotted.split('.') {
        match here {
            Value::Object(map) => match map.get(part) {
                Some(next) => here = next,
                None => return false,
            },
            _ => return true,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_misspelt_attribute_is_found_in_any_position() {
        let mut env = environment(false);
        let context = json!({"flight": {"airlineIata": "AF"}, "booking": {"travelers": [{}]}});
        for (template, unknown) in [
            (
                "{{ flight.airline_iata | tojson }}",
                Some("flight.airline_iata"),
            ),
            ("{% if flight.number %}x{% endif %}", Some("flight.number")),
            ("{{ fligth.airlineIata }}", Some("fligth.airlineIata")),
            (
                "{% if request.data.x is defined %}{{ request.data.x }}{% endif %}",
                None,
            ),
            ("{{ flight.airlineIata | lower }}", None),
            (
                "{% for t in booking.travelers %}{{ t.anything }}{% endfor %}",
                None,
            ),
            ("{% for i in range(2) %}{{ i }}{% endfor %}", None),
            ("{{ dict(x=1) | tojson }}", None),
            ("{% set ns = namespace(total=0) %}{{ ns.total }}", None),
            ("{% if quote is defined %}{{ quote.id }}{% endif %}", None),
            ("{{ booking.agent | default(\"x\") }}", None),
            ("{{ booking.agent }}", Some("booking.agent")),
        ] {
            env.add_template_owned("t", template.to_string()).unwrap();
            assert_eq!(
                unknown_attribute(&env, "t", &context).as_deref(),
                unknown,
                "{template}"
            );
        }
    }

    #[test]
    fn tojson_of_undefined_is_an_error_not_null() {
        let env = environment(false);
        let rendered = env.render_str(
            "{{ flight.nope | tojson }}",
            minijinja::Value::from(minijinja::value::Serde(json!({"flight": {}}))),
        );
        assert!(rendered.is_err(), "{rendered:?}");
        let rendered = env.render_str(
            "{{ flight | tojson }}",
            minijinja::Value::from(minijinja::value::Serde(json!({"flight": {"a": 1}}))),
        );
        assert_eq!(rendered.unwrap(), r#"{"a": 1}"#);
    }
}

//! Date filters of every template: minijinja-contrib's `datetimeformat`, `dateformat` and
//! `timeformat` with time zones (`tz="UTC"`). Their `format=` takes the `time` crate's
//! description syntax (`[year]-[month]-[day]T[hour]:[minute]:[second]Z`, as ppcert documents),
//! translated here to the strftime the filters speak; a format without `[` (`iso`, `short`,
//! `%Y-%m-%d`) passes through unchanged. Also the `env` global of header templates.

use std::sync::Arc;

use minijinja::value::{Kwargs, Object, Value};
use minijinja::{Environment, Error, ErrorKind, State};

/// Registers the three filters and the `env` global on `env`.
pub(super) fn register(env: &mut Environment<'static>) {
    env.add_filter("datetimeformat", |s: &State, v: Value, k: Kwargs| {
        with_format(s, v, k, minijinja_contrib::filters::datetimeformat)
    });
    env.add_filter("dateformat", |s: &State, v: Value, k: Kwargs| {
        with_format(s, v, k, minijinja_contrib::filters::dateformat)
    });
    env.add_filter("timeformat", |s: &State, v: Value, k: Kwargs| {
        with_format(s, v, k, minijinja_contrib::filters::timeformat)
    });
    env.add_global("env", Value::from_object(EnvVars));
}

type Filter = fn(&State, Value, Kwargs) -> Result<String, Error>;

/// Calls `filter` with `format=` translated from the `time` crate's syntax when it uses it.
fn with_format(
    state: &State,
    value: Value,
    kwargs: Kwargs,
    filter: Filter,
) -> Result<String, Error> {
    let format: Option<String> = kwargs.get("format")?;
    let Some(format) = format.filter(|f| f.contains('[')) else {
        return filter(state, value, kwargs);
    };
    let strftime = translate(&format)?;
    let tz: Option<Value> = kwargs.get("tz")?;
    kwargs.assert_all_used()?;
    let mut args = vec![("format", Value::from(strftime))];
    if let Some(tz) = tz {
        args.push(("tz", tz));
    }
    filter(state, value, Kwargs::from_iter(args))
}

/// The `time` crate's format description as strftime: `[[` is a literal `[`, `%` is escaped,
/// components with their common modifiers are mapped, anything else is an error naming it.
pub(super) fn translate(description: &str) -> Result<String, Error> {
    let mut out = String::new();
    let mut rest = description;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("[[") {
            out.push('[');
            rest = &rest[2..];
        } else if c == '[' {
            let end = rest.find(']').ok_or_else(|| bad("a `[` without its `]`"))?;
            out.push_str(component(&rest[1..end])?);
            rest = &rest[end + 1..];
        } else {
            if c == '%' {
                out.push('%');
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Ok(out)
}

fn component(text: &str) -> Result<&'static str, Error> {
    let mut words = text.split_whitespace();
    let name = words.next().unwrap_or_default();
    let modifiers: Vec<&str> = words.collect();
    let has = |m: &str| modifiers.contains(&m);
    let unpadded = has("padding:none");
    Ok(match name {
        "year" if has("repr:last_two") => "%y",
        "year" => "%Y",
        "month" if has("repr:short") => "%b",
        "month" if has("repr:long") => "%B",
        "month" if unpadded => "%-m",
        "month" => "%m",
        "day" if unpadded => "%-d",
        "day" => "%d",
        "hour" if has("repr:12") => "%I",
        "hour" => "%H",
        "minute" => "%M",
        "second" => "%S",
        "subsecond" if has("digits:3") => "%3f",
        "subsecond" if has("digits:6") => "%6f",
        "subsecond" => "%f",
        "period" => "%p",
        "weekday" if has("repr:short") => "%a",
        "weekday" => "%A",
        "ordinal" => "%j",
        "unix_timestamp" => "%s",
        "offset_hour" => {
            return Err(bad(
                "[offset_hour]: write the offset as %:z (+02:00) or %z (+0200)",
            ));
        }
        other => {
            return Err(bad(&format!(
                "[{other}] is not a date or time component ppcert knows"
            )));
        }
    })
}

fn bad(why: &str) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("format: {why}"))
}

/// `env.NAME` in a template: the variable's value, undefined (an error in strict templates)
/// when it is not set. Not enumerable: a template cannot list the environment.
#[derive(Debug)]
struct EnvVars;

impl Object for EnvVars {
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        crate::env::named(key.as_str()?).map(Value::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &str, value: &str) -> Result<String, Error> {
        let mut env = Environment::new();
        register(&mut env);
        env.render_str(template, minijinja::context! { value => value })
    }

    #[test]
    fn the_documented_utc_example_converts_an_offset_to_z() {
        let utc = render(
            r#"{{ value | datetimeformat(format="[year]-[month]-[day]T[hour]:[minute]:[second]Z", tz="UTC") }}"#,
            "2027-03-14T09:30:00+02:00",
        );
        assert_eq!(utc.unwrap(), "2027-03-14T07:30:00Z");
        let day = render(
            r#"{{ value | dateformat(format="[day]/[month]/[year]", tz="UTC") }}"#,
            "2027-03-14T01:30:00+02:00",
        );
        assert_eq!(day.unwrap(), "13/03/2027");
        let iso = render(
            r#"{{ value | datetimeformat(format="iso", tz="Asia/Tokyo") }}"#,
            "2027-03-14T00:00:00Z",
        );
        assert_eq!(iso.unwrap(), "2027-03-14T09:00:00+09:00");
    }

    #[test]
    fn an_unknown_component_is_named() {
        let error = translate("[year]-[fortnight]").unwrap_err();
        assert!(error.to_string().contains("[fortnight]"), "{error}");
        assert_eq!(translate("[[[year]] 100%").unwrap(), "[%Y] 100%%");
    }
}

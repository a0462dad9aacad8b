//! The `utc` filter of every template: a date-time with an offset becomes the same instant in
//! UTC (`2027-03-14T09:30:00+02:00` → `2027-03-14T07:30:00Z`), and a map or list is returned
//! with every such date-time inside it converted, so a staging that takes only `...Z` instants
//! is sent `{{ request | utc | tojson }}` instead of a body re-spelt field by field.

use chrono::{DateTime, SecondsFormat, Utc};
use minijinja::value::Value;
use minijinja::{Error, ErrorKind};
use serde_json::Value as Json;

/// The filter: strings, maps and lists; anything else is returned as it is.
pub(super) fn utc(value: Value) -> Result<Value, Error> {
    if value.is_undefined() {
        return Err(Error::new(
            ErrorKind::UndefinedError,
            "utc of an undefined value (a misspelt attribute?)",
        ));
    }
    let mut json = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("utc: {e}")))?;
    convert(&mut json);
    Ok(Value::from(minijinja::value::Serde(json)))
}

fn convert(value: &mut Json) {
    match value {
        Json::String(text) => {
            if let Some(instant) = date_time(text) {
                *text = instant.to_rfc3339_opts(SecondsFormat::AutoSi, true);
            }
        }
        Json::Array(items) => items.iter_mut().for_each(convert),
        Json::Object(fields) => fields.values_mut().for_each(convert),
        _ => {}
    }
}

/// A date with a time and an offset (RFC 3339); a bare date or a time without an offset is
/// not an instant and stays as it is.
fn date_time(text: &str) -> Option<DateTime<Utc>> {
    if !matches!(text.as_bytes().get(10), Some(b'T' | b't')) {
        return None;
    }
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|instant| instant.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use minijinja::Environment;
    use serde_json::json;

    fn render(template: &str, value: Json) -> String {
        let mut env = Environment::new();
        env.add_filter("utc", utc);
        env.render_str(
            template,
            minijinja::context! { value => Value::from(minijinja::value::Serde(value)) },
        )
        .unwrap()
    }

    #[test]
    fn an_instant_and_every_instant_inside_a_body_become_z() {
        let one = render("{{ value | utc }}", json!("2027-03-14T09:30:00+02:00"));
        assert_eq!(one, "2027-03-14T07:30:00Z");
        let body = json!({"data": {"trips": [{"flights": [
            {"departureDate": "2027-03-14T09:30:00+02:00", "arrivalDate": "2027-03-14T12:00:00.5-05:00"}]}],
            "birthdate": "1990-01-01", "price": 10.5, "naive": "2027-03-14T09:30:00"}});
        let sent: Json = serde_json::from_str(&render("{{ value | utc | tojson }}", body)).unwrap();
        let flight = &sent["data"]["trips"][0]["flights"][0];
        assert_eq!(flight["departureDate"], "2027-03-14T07:30:00Z");
        assert_eq!(flight["arrivalDate"], "2027-03-14T17:00:00.500Z");
        assert_eq!(sent["data"]["birthdate"], "1990-01-01");
        assert_eq!(sent["data"]["price"], 10.5);
        assert_eq!(sent["data"]["naive"], "2027-03-14T09:30:00");
    }
}

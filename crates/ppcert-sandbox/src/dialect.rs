//! The provider's documented request shapes (`ppcert serve --dialect provider-docs`):
//! `customer {email, firstName, lastName, language}` instead of `client`, travelers'
//! `birthday` instead of `birthdate`, and the documented flight-status call. A body in the
//! documented shape is checked for those names, re-spelled into the spec's shape, and then held
//! to exactly the spec's rules; errors name the documented field.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::validate::{ApiFailure, Checked, parse_data, parse_parsed_data};

/// Which document the sandbox enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApiDialect {
    #[default]
    Spec,
    ProviderDocs,
}

/// Parses a subscription or update body in the dialect served.
pub fn parse_request<T: DeserializeOwned>(dialect: ApiDialect, body: &[u8]) -> Checked<T> {
    match dialect {
        ApiDialect::Spec => parse_data(body),
        ApiDialect::ProviderDocs => {
            let respelled = to_spec_shape(body)?;
            parse_data(&respelled).map_err(docs_names)
        }
    }
}

/// [`parse_request`] of a body already parsed (`body` is `serde_json::from_slice` of its
/// bytes): the same refusals, without parsing it again.
pub fn parse_parsed_request<T: DeserializeOwned>(dialect: ApiDialect, body: &Value) -> Checked<T> {
    match dialect {
        ApiDialect::Spec => parse_parsed_data(body),
        ApiDialect::ProviderDocs => {
            let mut respelled = body.clone();
            respell(&mut respelled)?;
            parse_parsed_data(&respelled).map_err(docs_names)
        }
    }
}

/// Checks the documented names and re-spells the body; a body that is not a JSON object with
/// `data` is passed on for the spec parser to refuse in its own words.
fn to_spec_shape(body: &[u8]) -> Checked<Vec<u8>> {
    let Ok(mut value) = serde_json::from_slice::<Value>(body) else {
        return Ok(body.to_vec());
    };
    if !respell(&mut value)? {
        return Ok(body.to_vec());
    }
    Ok(value.to_string().into_bytes())
}

/// Re-spells a parsed body in place; false (and untouched) when it is not an object with a
/// `data` object.
fn respell(value: &mut Value) -> Checked<bool> {
    let Some(data) = value.get_mut("data").and_then(Value::as_object_mut) else {
        return Ok(false);
    };
    if data.contains_key("client") {
        return Err(ApiFailure::invalid(
            "data.customer",
            "expected `customer {email, firstName, lastName, language}` (provider docs), not `client`",
        ));
    }
    let customer = match data.remove("customer") {
        Some(Value::Object(customer)) => customer,
        Some(_) => return Err(ApiFailure::invalid("data.customer", "must be an object")),
        None => return Err(ApiFailure::invalid("data.customer", "is required")),
    };
    data.insert("client".into(), Value::Object(client_of(customer)?));
    respell_travelers(data)?;
    Ok(true)
}

fn client_of(mut customer: Map<String, Value>) -> Checked<Map<String, Value>> {
    for (spec_name, docs_name) in [("firstname", "firstName"), ("lastname", "lastName")] {
        if customer.contains_key(spec_name) {
            return Err(ApiFailure::invalid(
                format!("data.customer.{docs_name}"),
                format!("expected `{docs_name}` (provider docs), not `{spec_name}`"),
            ));
        }
    }
    match customer.remove("language") {
        Some(Value::String(tag)) if is_language_tag(&tag) => {}
        Some(other) => {
            return Err(ApiFailure::invalid(
                "data.customer.language",
                format!("{other} is not a language tag like `en-GB`"),
            ));
        }
        None => return Err(ApiFailure::invalid("data.customer.language", "is required")),
    }
    let mut client = Map::new();
    for (docs_name, spec_name) in [
        ("email", "email"),
        ("firstName", "firstname"),
        ("lastName", "lastname"),
    ] {
        if let Some(value) = customer.remove(docs_name) {
            client.insert(spec_name.into(), value);
        }
    }
    Ok(client)
}

/// `en`, `en-GB`, `pt-PT`: a language and an optional region.
fn is_language_tag(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let language = parts.next().unwrap_or_default();
    let region = parts.next();
    (2..=3).contains(&language.len())
        && language.bytes().all(|b| b.is_ascii_lowercase())
        && region.is_none_or(|r| r.len() == 2 && r.bytes().all(|b| b.is_ascii_uppercase()))
        && parts.next().is_none()
}

fn respell_travelers(data: &mut Map<String, Value>) -> Checked<()> {
    let Some(Value::Array(quotes)) = data.get_mut("quotes") else {
        return Ok(());
    };
    for (q, quote) in quotes.iter_mut().enumerate() {
        let Some(Value::Array(travelers)) = quote.get_mut("travelers") else {
            continue;
        };
        for (t, traveler) in travelers.iter_mut().enumerate() {
            let Some(traveler) = traveler.as_object_mut() else {
                continue;
            };
            if traveler.contains_key("birthdate") {
                return Err(ApiFailure::invalid(
                    format!("data.quotes[{q}].travelers[{t}].birthday"),
                    "expected `birthday` (provider docs), not `birthdate`",
                ));
            }
            if let Some(day) = traveler.remove("birthday") {
                traveler.insert("birthdate".into(), day);
            }
        }
    }
    Ok(())
}

/// A spec-shape error's field, in the documented names.
fn docs_names(mut failure: ApiFailure) -> ApiFailure {
    if let Some(field) = failure.field.take() {
        failure.field = Some(
            field
                .replace("data.client", "data.customer")
                .replace("customer.firstname", "customer.firstName")
                .replace("customer.lastname", "customer.lastName")
                .replace(".birthdate", ".birthday"),
        );
    }
    failure
}

/// `POST .../statuses` body: `{"data": {"providedAt": date-time, "status": "Canceled"}}`.
pub fn check_flight_status(body: &[u8]) -> Checked<()> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|_| ApiFailure::invalid("data", "body is not valid JSON"))?;
    check_parsed_flight_status(&value)
}

/// [`check_flight_status`] of a body already parsed.
pub fn check_parsed_flight_status(value: &Value) -> Checked<()> {
    let data = &value["data"];
    let provided = data["providedAt"]
        .as_str()
        .ok_or_else(|| ApiFailure::invalid("data.providedAt", "is required"))?;
    crate::validate::parse_datetime(provided, "data.providedAt")?;
    if data["status"] != json!("Canceled") {
        return Err(ApiFailure::invalid(
            "data.status",
            "must be \"Canceled\" (the only status the provider documents)",
        ));
    }
    Ok(())
}

/// The OpenAPI document of the documented dialect: the spec's, re-spelled.
pub fn document(spec: &Value) -> Value {
    let mut document = spec.clone();
    let schemas = &mut document["components"]["schemas"];
    if let Some(map) = schemas.as_object_mut() {
        map.remove("Client");
        map.insert(
            "Customer".into(),
            json!({
                "type": "object",
                "required": ["email", "firstName", "lastName", "language"],
                "properties": {
                    "email": {"type": "string", "format": "email"},
                    "firstName": {"type": "string", "minLength": 1},
                    "lastName": {"type": "string", "minLength": 1},
                    "language": {"type": "string", "pattern": "^[a-z]{2,3}(-[A-Z]{2})?$"}
                }
            }),
        );
    }
    for request in ["SubscriptionRequest", "UpdateRequest"] {
        let schema = &mut schemas[request];
        if let Some(props) = schema["properties"].as_object_mut() {
            props.remove("client");
            props.insert(
                "customer".into(),
                json!({"$ref": "#/components/schemas/Customer"}),
            );
        }
        rename_required(schema, "client", "customer");
    }
    let traveler = &mut schemas["Traveler"];
    if let Some(props) = traveler["properties"].as_object_mut()
        && let Some(birth) = props.remove("birthdate")
    {
        props.insert("birthday".into(), birth);
    }
    rename_required(traveler, "birthdate", "birthday");
    flight_status_path(&mut document);
    document
}

fn rename_required(schema: &mut Value, from: &str, to: &str) {
    if let Some(required) = schema["required"].as_array_mut() {
        for name in required.iter_mut().filter(|n| *n == from) {
            *name = json!(to);
        }
    }
}

fn flight_status_path(document: &mut Value) {
    let Some(paths) = document["paths"].as_object_mut() else {
        return;
    };
    let Some(mut operation) = paths
        .remove("/flight-cancellations")
        .map(|p| p["post"].clone())
    else {
        return;
    };
    operation["operationId"] = json!("reportFlightStatus");
    operation["summary"] = json!("Report a flight's cancellation (provider docs)");
    let parameter = |name: &str, pattern: &str| {
        json!({"name": name, "in": "path", "required": true,
               "schema": {"type": "string", "pattern": pattern}})
    };
    operation["parameters"] = json!([
        parameter("airlineIata", "^[A-Z0-9]{2}$"),
        parameter("number", "^[0-9]{1,4}[A-Z]?$"),
        parameter("localDepartureDate", "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
        parameter("departureAirportIata", "^[A-Z]{3}$"),
    ]);
    operation["responses"]["201"]["content"]["application/json"]["schema"]["properties"]["data"] = json!({"type": "object", "required": ["id", "status"], "properties": {
            "id": {"type": "string"}, "airlineIata": {"type": "string"},
            "number": {"type": "string"}, "localDepartureDate": {"type": "string"},
            "departureAirportIata": {"type": "string"}, "status": {"type": "string"}}});
    operation["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": {
    "type": "object", "required": ["data"], "properties": {"data": {
        "type": "object", "required": ["providedAt", "status"], "properties": {
            "providedAt": {"type": "string", "format": "date-time"},
            "status": {"type": "string", "enum": ["Canceled"]}
        }}}}}}});
    paths.insert(
        "/flights/{airlineIata}/{number}/{localDepartureDate}/{departureAirportIata}/statuses"
            .into(),
        json!({ "post": operation }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: Value) -> String {
        to_spec_shape(body.to_string().as_bytes())
            .unwrap_err()
            .field
            .unwrap()
    }

    #[test]
    fn the_spec_shape_is_refused_naming_the_documented_field() {
        assert_eq!(refused(json!({"data": {"client": {}}})), "data.customer");
        assert_eq!(
            refused(json!({"data": {"customer": {"firstname": "a", "language": "en"}}})),
            "data.customer.firstName"
        );
        let birthdate = json!({"data": {"customer": {"email": "a@example.com", "firstName": "A",
            "lastName": "B", "language": "en-GB"},
            "quotes": [{"reference": "R", "travelers": [{"birthdate": "1990-01-01"}]}]}});
        assert_eq!(refused(birthdate), "data.quotes[0].travelers[0].birthday");
        assert_eq!(
            refused(json!({"data": {"customer": {"language": "english"}}})),
            "data.customer.language"
        );
    }

    #[test]
    fn language_tags() {
        for good in ["en", "en-GB", "pt-PT", "fil"] {
            assert!(is_language_tag(good), "{good}");
        }
        for bad in ["EN", "en-gb", "english", "en-GB-x", ""] {
            assert!(!is_language_tag(bad), "{bad}");
        }
    }
}

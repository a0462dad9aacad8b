//! Answers as JSON:API documents (jsonapi.org 1.1), for a staging whose media type is
//! `application/vnd.api+json`: each resource `{"type", "id", "attributes"}` under `data`, the
//! booking's contracts a list of such resources. Error answers keep the sandbox's shape.

use serde_json::{Map, Value, json};

/// The resource type a path's answer is of: its first segment (`/quotes`, `/subscriptions`,
/// `/contracts/{id}/claims` is a claim, `/subscriptions/{bn}/contracts` are contracts).
fn kind(path: &str) -> &str {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [.., "claims"] => "claims",
        [.., "contracts"] => "contracts",
        [first, ..] => first,
        [] => "resources",
    }
}

/// A success answer's `{"data": ...}` as a JSON:API document; anything else as it was.
pub(crate) fn document(path: &str, mut body: Value) -> Value {
    let Some(data) = body.get_mut("data") else {
        return body;
    };
    let kind = kind(path);
    let id_in_path = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    *data = match data.take() {
        Value::Object(map) if kind == "contracts" => Value::Array(contracts(Value::Object(map))),
        Value::Array(items) if kind == "contracts" => Value::Array(contracts(Value::Array(items))),
        Value::Object(map) => resource(kind, map, id_in_path),
        other => other,
    };
    body
}

/// Every contract (an object with `id` and `productType`) wherever the layout put it, as a
/// resource.
fn contracts(value: Value) -> Vec<Value> {
    let mut found = Vec::new();
    gather(value, &mut found);
    found
        .into_iter()
        .map(|contract| resource("contracts", contract, ""))
        .collect()
}

fn gather(value: Value, found: &mut Vec<Map<String, Value>>) {
    match value {
        Value::Object(map) if map.contains_key("id") && map.contains_key("productType") => {
            found.push(map);
        }
        Value::Object(map) => map.into_iter().for_each(|(_, v)| gather(v, found)),
        Value::Array(items) => items.into_iter().for_each(|v| gather(v, found)),
        _ => {}
    }
}

/// `{"type", "id", "attributes"}`: the id is the object's own (a subscription's is its
/// booking number, which its attributes keep), else the path's last segment.
fn resource(kind: &str, mut fields: Map<String, Value>, id_in_path: &str) -> Value {
    fields.remove("type");
    let id = match fields.remove("id") {
        Some(Value::String(id)) => id,
        Some(Value::Number(n)) => n.to_string(),
        _ => (fields.get("bookingNumber").and_then(Value::as_str))
            .unwrap_or(id_in_path)
            .to_string(),
    };
    json!({"type": kind, "id": id, "attributes": fields})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_and_contracts_become_json_api_documents() {
        let quote = json!({"data": {"id": "qt_1", "reference": "QR-1", "priceDelta": 2.5}});
        assert_eq!(
            document("/quotes", quote),
            json!({"data": {"type": "quotes", "id": "qt_1",
                "attributes": {"reference": "QR-1", "priceDelta": 2.5}}})
        );
        let subscription = json!({"data": {"bookingNumber": "BN1", "status": "ACTIVE"}});
        let document_ = document("/subscriptions", subscription);
        assert_eq!(document_["data"]["id"], "BN1");
        assert_eq!(document_["data"]["attributes"]["bookingNumber"], "BN1");
        let contracts = json!({"data": {"WITHDRAWAL": [
            {"id": "ct_1", "productType": "WITHDRAWAL", "claim": {"status": "ACCEPTED"}}]}});
        let listed = document("/subscriptions/BN1/contracts", contracts);
        assert_eq!(
            listed["data"],
            json!([{"type": "contracts", "id": "ct_1", "attributes":
                {"productType": "WITHDRAWAL", "claim": {"status": "ACCEPTED"}}}])
        );
        let operation = json!({"data": {"type": "operations", "id": "op_1", "status": "running"}});
        let read = document("/operations/op_1", operation);
        assert_eq!(read["data"]["attributes"], json!({"status": "running"}));
        let error = json!({"error": {"code": "NOT_FOUND"}});
        assert_eq!(document("/quotes", error.clone()), error);
    }
}

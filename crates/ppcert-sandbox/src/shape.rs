//! Answer shapes a real staging may choose where the spec is silent, applied to the sandbox's
//! answers on the way out: the quote under another wrapper key, each contract in a nested
//! `contract` object, integer ids, empty `201` bodies, RFC 9457 problem details. Clients are
//! tested against each; the API's rules do not change.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Map, Value, json};

use crate::layout::{ErrorShape, Layout, QuoteWrapper};
use crate::shared::Shared;

/// Bodies larger than this are passed through untouched (the sandbox writes none that big).
const MAX_RESHAPED: usize = 16 * 1024 * 1024;

impl Layout {
    fn reshapes(&self) -> bool {
        self.quote_wrapper != QuoteWrapper::None
            || self.nested_contract_objects
            || self.integer_ids
            || self.empty_created
            || self.errors != ErrorShape::Spec
    }
}

/// The middleware: rewrites an answer's JSON body into the configured shapes.
pub async fn reshape(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let layout = shared.options.layout;
    if !layout.reshapes() {
        return next.run(request).await;
    }
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_RESHAPED).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let status = parts.status;
    if status == StatusCode::CREATED && layout.empty_created && !is_quote(&method, &path) {
        parts.headers.remove(header::CONTENT_TYPE);
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::empty());
    }
    if status.is_client_error() || status.is_server_error() {
        if layout.errors == ErrorShape::Problem {
            value = problem(status, &value);
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/problem+json"),
            );
        }
    } else {
        reshape_success(&layout, &method, &path, &mut value);
    }
    let text = value.to_string();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

fn is_quote(method: &Method, path: &str) -> bool {
    method == Method::POST && path.ends_with("/quotes")
}

fn reshape_success(layout: &Layout, method: &Method, path: &str, value: &mut Value) {
    let wrapped = layout.wrap && value.get("data").is_some();
    let payload = if wrapped {
        &mut value["data"]
    } else {
        &mut *value
    };
    if is_quote(method, path) {
        let fields = payload.take();
        *payload = match layout.quote_wrapper {
            QuoteWrapper::None => fields,
            QuoteWrapper::Quote => json!({ "quote": fields }),
            QuoteWrapper::ResultQuote => json!({ "result": { "quote": fields } }),
        };
    }
    if layout.nested_contract_objects && method == Method::GET && path.ends_with("/contracts") {
        nest_contracts(payload);
    }
    if layout.integer_ids {
        number_ids(value);
    }
}

/// Every contract element `{id, ..., claim}` becomes `{"contract": {id, ...}, "claim": ...}`.
fn nest_contracts(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(nest_contracts),
        Value::Object(map) if map.contains_key("id") && map.contains_key("productType") => {
            let mut contract = std::mem::take(map);
            let claim = contract.remove("claim");
            let mut element = Map::new();
            element.insert("contract".into(), Value::Object(contract));
            if let Some(claim) = claim {
                element.insert("claim".into(), claim);
            }
            *map = element;
        }
        Value::Object(map) => map.values_mut().for_each(nest_contracts),
        _ => {}
    }
}

/// `"id": "1000000042"` becomes `"id": 1000000042`, at any depth.
fn number_ids(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(number_ids),
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                let numeric = inner.as_str().and_then(|s| s.parse::<u64>().ok());
                match numeric {
                    Some(n) if key == "id" || key.ends_with("Id") => *inner = json!(n),
                    _ => number_ids(inner),
                }
            }
        }
        _ => {}
    }
}

/// `{"error": {code, message, field}}` as RFC 9457 problem details.
fn problem(status: StatusCode, value: &Value) -> Value {
    let error = &value["error"];
    let code = error["code"].as_str().unwrap_or("ERROR");
    let message = error["message"].as_str().unwrap_or("");
    let mut problem = json!({
        "type": format!("https://sandbox.ppcert.invalid/problems/{}", code.to_lowercase()),
        "title": code,
        "status": status.as_u16(),
        "detail": message,
    });
    if let Some(field) = error["field"].as_str() {
        problem["invalid-params"] = json!([{ "name": field, "reason": message }]);
    }
    problem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contracts_nest_and_ids_become_numbers() {
        let mut body = json!({"WITHDRAWAL": [{"id": "1000000007", "productType": "WITHDRAWAL",
            "claim": {"id": "1000000009", "status": "ACCEPTED"}}]});
        nest_contracts(&mut body);
        number_ids(&mut body);
        assert_eq!(
            body,
            json!({"WITHDRAWAL": [{"contract": {"id": 1000000007, "productType": "WITHDRAWAL"},
                "claim": {"id": 1000000009, "status": "ACCEPTED"}}]})
        );
    }

    #[test]
    fn errors_become_problem_details_naming_the_field() {
        let body = json!({"error": {"code": "INVALID_FIELD", "message": "required",
            "field": "data.customer"}});
        let problem = problem(StatusCode::BAD_REQUEST, &body);
        assert_eq!(problem["status"], 400);
        assert_eq!(problem["invalid-params"][0]["name"], "data.customer");
        assert_eq!(problem["title"], "INVALID_FIELD");
    }
}

//! Request encodings a staging may require (`Wire`, combinable): a media type of its own for
//! every JSON body (JSON:API documents when it is `application/vnd.api+json`), updates as
//! JSON Patch, claims as `multipart/form-data` with a PDF. The middleware checks the request as
//! sent and hands the handlers the plain `{"data": ...}` body they read; under JSON:API it
//! answers JSON:API documents too.

use std::sync::Arc;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::options::Wire;
use crate::shared::Shared;
use crate::validate::ApiFailure;

/// JSON Patch's media type (RFC 6902).
pub const JSON_PATCH: &str = "application/json-patch+json";
/// JSON:API's media type (jsonapi.org, 1.1).
pub const JSON_API: &str = "application/vnd.api+json";

/// A media type without its parameters, lower-cased.
fn essence(media_type: &str) -> String {
    let essence = media_type.split(';').next().unwrap_or("");
    essence.trim().to_ascii_lowercase()
}

fn unsupported(message: String) -> ApiFailure {
    ApiFailure::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UNSUPPORTED_MEDIA_TYPE",
        message,
    )
}

fn bad(code: &'static str, message: impl Into<String>) -> ApiFailure {
    ApiFailure::new(StatusCode::BAD_REQUEST, code, message)
}

/// The middleware: refuses what the staging does not take, decodes what it does.
pub(crate) async fn decode(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let wire = shared.options.wire.clone();
    if !wire.is_on() {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    if let Some(media) = &wire.media_type
        && !accepts(parts.headers.get(header::ACCEPT), media)
    {
        let message = format!("this API answers {media}: send Accept: {media}");
        return ApiFailure::new(StatusCode::NOT_ACCEPTABLE, "NOT_ACCEPTABLE", message)
            .into_response();
    }
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return bad("INVALID_BODY", "the body could not be read").into_response();
    };
    let content_type = (parts.headers.get(header::CONTENT_TYPE))
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let path = parts.uri.path().to_string();
    let decoded = if bytes.is_empty() {
        Ok(None)
    } else if wire.json_patch_updates && parts.method == Method::PATCH {
        let booking = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        let booking = booking.to_string();
        patched(&shared, &booking, &content_type, &bytes).map(Some)
    } else if wire.multipart_claims
        && parts.method == Method::POST
        && path.trim_end_matches('/').ends_with("/claims")
    {
        claim(&wire, &content_type, &bytes).map(Some)
    } else {
        let media = wire.media_type.as_deref().unwrap_or("application/json");
        document(media, &content_type, &bytes)
    };
    let body = match decoded {
        Err(failure) => return failure.into_response(),
        Ok(None) => Body::from(bytes),
        Ok(Some(value)) => {
            let text = value.to_string();
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            parts
                .headers
                .insert(header::CONTENT_LENGTH, HeaderValue::from(text.len()));
            Body::from(text)
        }
    };
    let response = next.run(Request::from_parts(parts, body)).await;
    answered(&wire, &path, response).await
}

/// The answer in the staging's media type, and as JSON:API documents under JSON:API.
async fn answered(wire: &Wire, path: &str, mut response: Response) -> Response {
    answer_as(wire, &mut response);
    if wire
        .media_type
        .as_deref()
        .is_some_and(|m| essence(m) == JSON_API)
    {
        return as_documents(path, response).await;
    }
    response
}

/// A success's JSON answer as a JSON:API document (`jsonapi.rs`).
async fn as_documents(path: &str, response: Response) -> Response {
    if !response.status().is_success() {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let text = crate::jsonapi::document(path, value).to_string();
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

/// A JSON answer carries the staging's own media type.
fn answer_as(wire: &Wire, response: &mut Response) {
    let Some(media) = &wire.media_type else {
        return;
    };
    let headers = response.headers_mut();
    let json = (headers.get(header::CONTENT_TYPE))
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| essence(t) == "application/json");
    if json && let Ok(value) = HeaderValue::from_str(media) {
        headers.insert(header::CONTENT_TYPE, value);
    }
}

/// Whether an `Accept` header admits `media` (no header admits anything).
fn accepts(accept: Option<&HeaderValue>, media: &str) -> bool {
    let Some(accept) = accept.and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let wanted = essence(media);
    let (kind, _) = wanted.split_once('/').unwrap_or((&wanted, ""));
    accept.split(',').any(|range| {
        let range = essence(range);
        range == wanted || range == "*/*" || range == format!("{kind}/*")
    })
}

/// A JSON body sent as `media`: JSON:API documents are unwrapped to `{"data": attributes}`;
/// any other goes to the handlers as it came (`None`), so they judge its JSON.
fn document(media: &str, content_type: &str, bytes: &[u8]) -> Result<Option<Value>, ApiFailure> {
    if essence(content_type) != essence(media) {
        let sent = if content_type.is_empty() {
            "none"
        } else {
            content_type
        };
        return Err(unsupported(format!(
            "this API takes {media} (sent: {sent})"
        )));
    }
    if essence(media) != JSON_API {
        return Ok(None);
    }
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| bad("INVALID_JSON", format!("the body is not JSON: {e}")))?;
    let data = &value["data"];
    let (Some(_), Some(attributes)) = (data["type"].as_str(), data["attributes"].as_object())
    else {
        return Err(bad(
            "INVALID_DOCUMENT",
            "a JSON:API document: {\"data\": {\"type\": ..., \"attributes\": {...}}}",
        ));
    };
    Ok(Some(json!({ "data": attributes })))
}

/// An update as a JSON Patch over the subscription `{bookingNumber, quotes, client}`.
fn patched(
    shared: &Shared,
    booking: &str,
    content_type: &str,
    bytes: &[u8],
) -> Result<Value, ApiFailure> {
    if essence(content_type) != JSON_PATCH {
        return Err(unsupported(format!("updates take {JSON_PATCH} (RFC 6902)")));
    }
    let patch: Value = serde_json::from_slice(bytes)
        .map_err(|e| bad("INVALID_JSON", format!("the body is not JSON: {e}")))?;
    // An unknown booking gets the handler's 404: patch an empty subscription.
    let current = shared
        .store()
        .subscription_document(booking)
        .unwrap_or_else(|| json!({}));
    let updated = crate::jsonpatch::apply(&current, &patch)
        .map_err(|e| ApiFailure::new(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_PATCH", e))?;
    Ok(json!({ "data": updated }))
}

/// A claim as `multipart/form-data`: a `claim` part (the claim, in the staging's media type)
/// and a `document` part that is a PDF.
fn claim(wire: &Wire, content_type: &str, bytes: &[u8]) -> Result<Value, ApiFailure> {
    let boundary = crate::multipart::boundary(content_type).ok_or_else(|| {
        unsupported("claims take multipart/form-data: a claim part and a PDF document part".into())
    })?;
    let parts =
        crate::multipart::parse(bytes, &boundary).map_err(|e| bad("INVALID_MULTIPART", e))?;
    let named = |name: &str| parts.iter().find(|p| p.name == name);
    let claim = named("claim").ok_or_else(|| bad("MISSING_PART", "no part named claim"))?;
    let pdf = named("document").ok_or_else(|| bad("MISSING_PART", "no part named document"))?;
    let pdf_type = pdf.content_type.as_deref().map(essence);
    if pdf_type.as_deref() != Some("application/pdf") || !is_pdf(&pdf.bytes) {
        return Err(bad(
            "DOCUMENT_NOT_PDF",
            "the document part must be a PDF (application/pdf, %PDF- ... %%EOF)",
        ));
    }
    let claim_type = claim.content_type.clone().unwrap_or_default();
    let media = wire.media_type.as_deref().unwrap_or("application/json");
    match document(media, &claim_type, &claim.bytes)? {
        Some(unwrapped) => Ok(unwrapped),
        None => serde_json::from_slice(&claim.bytes)
            .map_err(|e| bad("INVALID_JSON", format!("the claim part is not JSON: {e}"))),
    }
}

/// A PDF as readers first check one: its header, and its end-of-file marker near the end.
fn is_pdf(bytes: &[u8]) -> bool {
    let tail = &bytes[bytes.len().saturating_sub(1024)..];
    bytes.starts_with(b"%PDF-") && tail.windows(5).any(|w| w == b"%%EOF")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_ranges_and_json_api_documents() {
        let accept = |v: &str| accepts(Some(&HeaderValue::from_str(v).unwrap()), JSON_API);
        assert!(accept("application/vnd.api+json"));
        assert!(accept("application/json, */*;q=0.1"));
        assert!(accept("application/*"));
        assert!(!accept("application/JSON"));
        assert!(accepts(None, JSON_API));
        let doc = br#"{"data": {"type": "quotes", "attributes": {"currency": "EUR"}}}"#;
        assert_eq!(
            document(JSON_API, "application/vnd.api+json", doc).unwrap(),
            Some(json!({"data": {"currency": "EUR"}}))
        );
        assert_eq!(
            document("application/json", "application/json", b"{").unwrap(),
            None
        );
        let refused = document(JSON_API, "application/json", doc).unwrap_err();
        assert_eq!(refused.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let flat = document(JSON_API, JSON_API, br#"{"data": {"currency": "EUR"}}"#);
        assert_eq!(flat.unwrap_err().code, "INVALID_DOCUMENT");
    }
}

//! Short-lived tokens, as many partner APIs issue them (`ppcert serve --token-ttl SECS`):
//! `POST /oauth/token` grants OAuth 2.0 client credentials (RFC 6749 §4.4; the client
//! authenticated by HTTP Basic or form fields, the sandbox's token as the client secret), and
//! the API then accepts only tokens it issued and that have not expired. An expired token is
//! answered 401 with RFC 6750's `WWW-Authenticate: Bearer error="invalid_token"`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::json;

use crate::shared::Shared;

pub(crate) mod issued;

/// RFC 6749 §5.2.
fn refused(status: StatusCode, error: &str, description: &str) -> Response {
    let mut response = (
        status,
        Json(json!({ "error": error, "error_description": description })),
    )
        .into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"ppcert sandbox\""),
        );
    }
    response
}

/// The client's id and secret, from HTTP Basic or the form.
fn client(headers: &HeaderMap, form: &HashMap<String, String>) -> Option<(String, String)> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| {
            base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .ok()
        })
        .and_then(|raw| String::from_utf8(raw).ok());
    if let Some(pair) = basic {
        let (id, secret) = pair.split_once(':')?;
        let decode = |s: &str| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
        };
        return Some((decode(id)?, decode(secret)?));
    }
    Some((
        form.get("client_id")?.clone(),
        form.get("client_secret")?.clone(),
    ))
}

pub async fn token(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(ttl) = shared.options.token_ttl else {
        return (
            StatusCode::NOT_FOUND,
            "this sandbox issues no tokens; start it with --token-ttl",
        )
            .into_response();
    };
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return refused(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "only client_credentials is granted",
        );
    }
    let Some((id, secret)) = client(&headers, &form) else {
        return refused(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "no client authentication",
        );
    };
    if id != shared.options.client_id || secret != shared.options.token {
        return refused(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "unknown client or wrong secret",
        );
    }
    let token = shared.issued.issue(ttl);
    Json(json!({
        "access_token": token,
        "token_type": "Bearer",
        "expires_in": ttl.as_secs(),
    }))
    .into_response()
}

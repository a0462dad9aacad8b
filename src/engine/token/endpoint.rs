//! The token endpoint of OAuth 2.0 client credentials (RFC 6749 §4.4): one POST per token
//! (again after a 429 or 5xx, a few times), its answer read up to a bound, the client secret
//! and the Basic header scrubbed from whatever the endpoint or the transport says back.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;

use super::error::TokenError;
use super::rules::{FETCH_ATTEMPTS, Fetched, call_record, fetch_wait};
use crate::config::{ClientAuth, ClientCredentials};
use crate::record::TokenRequest as TokenCall;
use crate::secret::Secret;
use crate::timestamp::Timestamp;

/// A token answer is a small JSON object: more than this is refused unread.
pub(crate) const MAX_ANSWER: u64 = 64 * 1024;

/// A token from the endpoint, asked again after a 429 or a 5xx (its `Retry-After` honoured,
/// bounded) as any request is; every attempt is passed to `record`.
pub(super) async fn fetch(
    c: &ClientCredentials,
    http: &reqwest::Client,
    timeout: Duration,
    mut record: impl FnMut(TokenCall),
) -> Result<Fetched, TokenError> {
    let mut attempt = 0;
    loop {
        let (at, clock) = (Timestamp::now(), Instant::now());
        let result = client_credentials(c, http, timeout).await;
        let request = format!("POST {}", c.token_url);
        record(call_record(at, clock, request, &result));
        let wait = match &result {
            Err(TokenError::EndpointRefused {
                status,
                retry_after,
                ..
            }) if *status == 429 || *status >= 500 => fetch_wait(attempt, *retry_after),
            _ => return result,
        };
        attempt += 1;
        if attempt >= FETCH_ATTEMPTS {
            return result;
        }
        tokio::time::sleep(wait).await;
    }
}

/// The `Basic` credentials (RFC 6749 §2.3.1: id and secret form-encoded, then base64): a
/// secret, since it decodes to the client secret.
pub(super) fn basic_credentials(c: &ClientCredentials) -> Secret {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let pair = format!(
        "{}:{}",
        encode(&c.client_id),
        encode(c.client_secret.expose())
    );
    Secret::new(base64::engine::general_purpose::STANDARD.encode(pair))
}

/// The answer's body, refused past [`MAX_ANSWER`] without reading the rest.
async fn bounded_body(
    mut response: reqwest::Response,
    url: &str,
) -> Result<Option<Value>, TokenError> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        if (body.len() + chunk.len()) as u64 > MAX_ANSWER {
            return Err(TokenError::AnswerTooLarge {
                url: url.to_string(),
                kib: MAX_ANSWER / 1024,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(serde_json::from_slice(&body).ok())
}

/// RFC 6749 §4.4: `grant_type=client_credentials`, the client authenticated by HTTP Basic
/// (id and secret form-encoded first, §2.3.1) or by form fields.
pub(super) async fn client_credentials(
    c: &ClientCredentials,
    http: &reqwest::Client,
    timeout: Duration,
) -> Result<(Secret, Option<Duration>), TokenError> {
    let response = token_request(c, http, timeout)?.send().await.map_err(|e| {
        TokenError::EndpointUnreachable {
            url: c.client_secret.scrub(c.token_url.as_str()),
            error: c.client_secret.scrub(&e.to_string()),
        }
    })?;
    let status = response.status().as_u16();
    let retry_after = (response.headers().get(reqwest::header::RETRY_AFTER))
        .and_then(|v| v.to_str().ok())
        .and_then(crate::engine::http::parse_retry_after);
    let scrubbed_url = c.client_secret.scrub(c.token_url.as_str());
    let answer = bounded_body(response, &scrubbed_url)
        .await?
        .unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        return Err(TokenError::EndpointRefused {
            url: scrubbed_url,
            status,
            words: refusal_words(c, &answer),
            retry_after,
        });
    }
    super::command::token_answer(&answer).ok_or_else(|| TokenError::NoAccessToken {
        url: c.token_url.to_string(),
        status,
    })
}

/// The form-encoded token request, the client's credentials in the Basic header or the form.
fn token_request(
    c: &ClientCredentials,
    http: &reqwest::Client,
    timeout: Duration,
) -> Result<reqwest::RequestBuilder, TokenError> {
    let mut form = vec![("grant_type", "client_credentials".to_string())];
    if let Some(scope) = &c.scope {
        form.push(("scope", scope.clone()));
    }
    if let Some(audience) = &c.audience {
        form.push(("audience", audience.clone()));
    }
    let mut request = http.post(c.token_url.clone()).timeout(timeout);
    match c.client_auth {
        ClientAuth::Basic => {
            let basic = basic_credentials(c);
            let basic = basic.expose();
            let mut value = reqwest::header::HeaderValue::from_str(&format!("Basic {basic}"))
                .map_err(|_| TokenError::UnsendableCredentials)?;
            value.set_sensitive(true);
            request = request.header(reqwest::header::AUTHORIZATION, value);
        }
        ClientAuth::Post => {
            form.push(("client_id", c.client_id.clone()));
            form.push(("client_secret", c.client_secret.expose().to_string()));
        }
    }
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    Ok(request
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body))
}

/// RFC 6749 §5.2: the server's own words of a refusal, never the rest of its answer; scrubbed
/// of the secret and the Basic header it may echo, escaped for the console.
fn refusal_words(c: &ClientCredentials, answer: &Value) -> String {
    let words = [&answer["error"], &answer["error_description"]]
        .iter()
        .filter_map(|v| v.as_str())
        .collect::<Vec<_>>()
        .join(": ");
    let words = if words.is_empty() {
        "no RFC 6749 error given".to_string()
    } else {
        words
    };
    let words = basic_credentials(c).scrub(&c.client_secret.scrub(&words));
    crate::console::printable(&words)
}

//! The token endpoint of OAuth 2.0 client credentials (RFC 6749 §4.4): one POST per token,
//! the client secret scrubbed from whatever the endpoint or the transport says back.

use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

use super::token_error::TokenError;
use crate::config::{ClientAuth, ClientCredentials};
use crate::secret::Secret;

/// RFC 6749 §4.4: `grant_type=client_credentials`, the client authenticated by HTTP Basic
/// (id and secret form-encoded first, §2.3.1) or by form fields.
pub(super) async fn client_credentials(
    c: &ClientCredentials,
    http: &reqwest::Client,
    timeout: Duration,
) -> Result<(Secret, Option<Duration>), TokenError> {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
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
            let pair = format!(
                "{}:{}",
                encode(&c.client_id),
                encode(c.client_secret.expose())
            );
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
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
    let response = request
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| TokenError::EndpointUnreachable {
            url: c.client_secret.scrub(c.token_url.as_str()),
            error: c.client_secret.scrub(&e.to_string()),
        })?;
    let status = response.status().as_u16();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        // RFC 6749 §5.2: the server's own words, never the rest of its answer.
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
        return Err(TokenError::EndpointRefused {
            url: c.client_secret.scrub(c.token_url.as_str()),
            status,
            words: c.client_secret.scrub(&words),
        });
    }
    super::token_command::token_answer(&answer).ok_or_else(|| TokenError::NoAccessToken {
        url: c.token_url.to_string(),
        status,
    })
}

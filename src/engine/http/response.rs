//! An answer as the record keeps it: its body read up to a limit, kept (cut, and parsed when it
//! is JSON) up to a smaller one, the token scrubbed from it; and a failed request in words.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::BodyError;
use crate::record::{Body, ResponseRecord};
use crate::secret::Scrub;

/// Bodies kept in the evidence are cut at this size; larger ones are not parsed.
pub const MAX_KEPT_BODY: usize = 64 * 1024;
/// Reading stops here: a larger body is an error, never a memory problem.
pub(crate) const MAX_READ_BODY: usize = 16 * 1024 * 1024;

/// A failed request in one line: what kind of failure, its innermost cause (the layers between
/// say nothing a user can act on), and what to check.
pub(super) fn describe(e: &reqwest::Error) -> String {
    let mut chain = e.to_string();
    let mut innermost = chain.clone();
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        innermost = inner.to_string();
        chain.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    let hint = tls_hint(&chain);
    let (kind, hint) = if e.is_timeout() {
        ("timed out", " (no answer within --timeout)")
    } else if e.is_connect() && hint.is_empty() {
        (
            "connection failed",
            " (is the staging up, and are the host and port of --base-url right?)",
        )
    } else if e.is_connect() {
        ("connection failed", hint)
    } else {
        ("request failed", hint)
    };
    format!("{kind}: {innermost}{hint}")
}

/// What to do about a certificate the client does not trust: usually a TLS-inspecting
/// corporate proxy or a staging signed by a private CA.
pub(crate) fn tls_hint(error: &str) -> &'static str {
    let lower = error.to_ascii_lowercase();
    if lower.contains("certificate") || lower.contains("unknownissuer") || lower.contains("tls") {
        " (a TLS-inspecting proxy or a private CA? pass its root certificate with --cacert FILE)"
    } else {
        ""
    }
}

/// Reads the body up to [`MAX_READ_BODY`], keeps at most [`MAX_KEPT_BODY`] of it, parsed as
/// JSON when it is JSON, else as text.
pub(super) async fn read_response(
    mut response: reqwest::Response,
    token: &dyn Scrub,
) -> Result<ResponseRecord, BodyError> {
    let status = response.status().as_u16();
    let tls_certificate_sha256 = certificate_sha256(&response);
    let mut headers = BTreeMap::new();
    for (name, value) in response.headers() {
        let value = String::from_utf8_lossy(value.as_bytes());
        headers.insert(name.as_str().to_string(), token.scrub(&value));
    }
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > MAX_READ_BODY {
                    let mib = MAX_READ_BODY >> 20;
                    return Err(BodyError::TooLarge { status, mib });
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => {
                let why = describe(&e);
                return Err(BodyError::CutOff { status, why });
            }
        }
    }
    let encoding = headers.get("content-encoding").map(String::as_str);
    let (bytes, encoding) = super::encoding::decode(encoding, bytes, MAX_READ_BODY)
        .map_err(|why| BodyError::Undecodable { status, why })?;
    let (body, body_truncated, full_json) = keep_body(&bytes, token);
    Ok(ResponseRecord {
        status,
        headers,
        body,
        body_truncated,
        full_json,
        cut: None,
        tls_certificate_sha256,
        encoding,
    })
}

/// The SHA-256 of the leaf certificate the server presented (a client built with
/// `tls_info(true)` keeps it with each answer); `None` over plain HTTP.
pub(crate) fn certificate_sha256(response: &reqwest::Response) -> Option<Box<str>> {
    let info = response.extensions().get::<reqwest::tls::TlsInfo>()?;
    Some(crate::digest::sha256_hex(info.peer_certificate()?).into())
}

/// JSON when it parses and is small enough; otherwise text, cut at [`MAX_KEPT_BODY`]. JSON of
/// any readable size is parsed first: the whole of it comes back for reading values.
pub(crate) fn keep_body(
    bytes: &[u8],
    token: &dyn Scrub,
) -> (Body, bool, Option<std::sync::Arc<Value>>) {
    if bytes.is_empty() {
        return (Body::null(), false, None);
    }
    if let Ok(mut value) = serde_json::from_slice::<Value>(bytes) {
        token.scrub_json(&mut value);
        if bytes.len() <= MAX_KEPT_BODY {
            return (Body::from_value(&value), false, None);
        }
        let text = value.to_string();
        let cut = text.floor_char_boundary(MAX_KEPT_BODY);
        let kept = Body::from_value(&Value::String(text[..cut].to_string()));
        return (kept, true, Some(std::sync::Arc::new(value)));
    }
    // Scrubbed whole, then cut: a token split by the cut would leave its first half behind.
    let text = token.scrub(&String::from_utf8_lossy(bytes));
    let cut = text.floor_char_boundary(MAX_KEPT_BODY);
    (
        Body::from_value(&Value::String(text[..cut].to_string())),
        text.len() > MAX_KEPT_BODY,
        None,
    )
}

//! The bearer token, held so that it cannot be printed by accident: its Debug and Display are
//! redacted, and every recorded text passes through [`Secret::scrub`], which knows the forms a
//! server commonly echoes it in: raw, JSON-escaped, percent-encoded (either hex case, `+` for
//! space), and base64 (standard and URL-safe, with or without padding).

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use regex::Regex;

/// What the Authorization header is written as in every record.
/// What stands in a record where a secret was.
pub(crate) const REDACTED: &str = "<redacted>";
pub(crate) const REDACTED_BEARER: &str = "Bearer <redacted>";

/// Shorter tokens cannot be told apart from ordinary text: scrubbing them would corrupt the
/// evidence (a one-letter token is in every word), so they are only kept out of headers.
pub(crate) const MIN_SCRUBBED_LEN: usize = 8;

#[derive(Clone)]
pub(crate) struct Secret(String, Option<Arc<Regex>>);

/// One pattern for every spelling of `token` worth scrubbing: each character raw, JSON-escaped
/// (`\u002f`, `\/`) or percent-encoded (`%2F`, `%2f`, `+` for a space), in any mix, plus the
/// token's base64 forms (standard and URL-safe, padded or not).
fn pattern(token: &str) -> Option<Regex> {
    let mut per_char = String::new();
    for c in token.chars() {
        let mut spellings = vec![regex::escape(&c.to_string())];
        if (c as u32) < 0x10000 {
            spellings.push(format!("\\\\u(?i:{:04x})", c as u32));
        }
        let mut utf8 = [0u8; 4];
        let percent: String = c
            .encode_utf8(&mut utf8)
            .bytes()
            .map(|b| format!("%(?i:{b:02x})"))
            .collect();
        spellings.push(percent);
        match c {
            '/' => spellings.push("\\\\/".into()),
            ' ' => spellings.push("\\+".into()),
            _ => {}
        }
        per_char.push_str(&format!("(?:{})", spellings.join("|")));
    }
    let mut alternatives = vec![per_char];
    for engine in [
        &base64::engine::general_purpose::STANDARD,
        &base64::engine::general_purpose::URL_SAFE,
    ] {
        let encoded = engine.encode(token.as_bytes());
        alternatives.push(format!(
            "{}(?:=*)",
            regex::escape(encoded.trim_end_matches('='))
        ));
    }
    Regex::new(&alternatives.join("|")).ok()
}

impl Secret {
    pub(crate) fn new(token: impl Into<String>) -> Secret {
        let token = token.into();
        let scrubber = (token.len() >= MIN_SCRUBBED_LEN)
            .then(|| pattern(&token))
            .flatten()
            .map(Arc::new);
        Secret(token, scrubber)
    }

    /// The raw token, for the Authorization header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// First 12 hex digits of the token's SHA-256: identifies it without revealing it.
    pub(crate) fn fingerprint(&self) -> String {
        crate::digest::sha256_hex(self.0.as_bytes())[..12].to_string()
    }

    /// Whether echoed copies of the token can be scrubbed from free text.
    pub(crate) fn scrubbable(&self) -> bool {
        self.0.len() >= MIN_SCRUBBED_LEN
    }

    /// Removes the token, in every form it is known in, from text a server may have echoed.
    pub(crate) fn scrub(&self, text: &str) -> String {
        match &self.1 {
            Some(pattern) => pattern.replace_all(text, REDACTED).into_owned(),
            None => text.to_string(),
        }
    }

    /// Removes the token from every string and every key inside a JSON value.
    pub(crate) fn scrub_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                let scrubbed = self.scrub(s);
                if scrubbed != *s {
                    *s = scrubbed;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_json(v)),
            serde_json::Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut inner) in entries {
                    self.scrub_json(&mut inner);
                    map.insert(self.scrub(&key), inner);
                }
            }
            _ => {}
        }
    }
}

/// What removes secrets from text a server or a command may have echoed: one token, or every
/// token a run was issued.
pub(crate) trait Scrub: Send + Sync {
    fn scrub(&self, text: &str) -> String;
    fn scrub_json(&self, value: &mut serde_json::Value);
}

impl Scrub for Secret {
    fn scrub(&self, text: &str) -> String {
        Secret::scrub(self, text)
    }

    fn scrub_json(&self, value: &mut serde_json::Value) {
        Secret::scrub_json(self, value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_never_formats_and_is_scrubbed() {
        let secret = Secret::new("tok-123456");
        assert!(!format!("{secret:?} {secret}").contains("tok-123456"));
        let mut body = serde_json::json!({"echo": ["Bearer tok-123456"]});
        secret.scrub_json(&mut body);
        assert_eq!(body, serde_json::json!({"echo": ["Bearer <redacted>"]}));
        assert_eq!(secret.fingerprint().len(), 12);
    }

    #[test]
    fn every_common_encoding_of_the_token_is_scrubbed_in_keys_and_values() {
        let token = "sk_live+ab/cd==ef12";
        let secret = Secret::new(token);
        let b64 = base64::engine::general_purpose::STANDARD.encode(token);
        let b64_url = base64::engine::general_purpose::URL_SAFE.encode(token);
        for echoed in [
            token.to_string(),
            "sk_live+ab\\/cd==ef12".to_string(),
            "sk_live\\u002bab\\u002fcd\\u003d\\u003def12".to_string(),
            "sk_live\\u002Bab\\u002Fcd\\u003D\\u003Def12".to_string(),
            "sk%5Flive%2Bab%2Fcd%3D%3Def12".to_string(),
            "sk%5flive%2bab%2fcd%3d%3def12".to_string(),
            b64.clone(),
            b64.trim_end_matches('=').to_string(),
            b64_url,
            "sk_live+ab\\/cd%3D=ef12".to_string(),
        ] {
            let text = format!("Location: https://x/login?next={echoed}&a=1");
            let scrubbed = secret.scrub(&text);
            assert!(scrubbed.contains("<redacted>"), "{echoed}: {scrubbed}");
            assert!(!scrubbed.contains(&echoed), "{echoed}: {scrubbed}");
        }
        let mut body = serde_json::json!({ token: {"nested": [format!("Bearer {token}")]} });
        secret.scrub_json(&mut body);
        assert!(!body.to_string().contains("sk_live"), "{body}");
    }

    #[test]
    fn a_too_short_token_is_not_scrubbed_from_text() {
        let secret = Secret::new("t");
        assert_eq!(secret.scrub("content-type"), "content-type");
        assert!(!secret.scrubbable());
    }
}

//! The bearer token, held so that it cannot be printed by accident: its Debug and Display are
//! redacted, and every recorded text passes through [`Secret::scrub`].

use std::fmt;

/// What the Authorization header is written as in every record.
pub const REDACTED_BEARER: &str = "Bearer <redacted>";

/// Shorter tokens cannot be told apart from ordinary text: scrubbing them would corrupt the
/// evidence (a one-letter token is in every word), so they are only kept out of headers.
pub const MIN_SCRUBBED_LEN: usize = 8;

#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn new(token: impl Into<String>) -> Secret {
        Secret(token.into())
    }

    /// The raw token, for the Authorization header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// First 12 hex digits of the token's SHA-256: identifies it without revealing it.
    pub fn fingerprint(&self) -> String {
        crate::scenario::sha256_hex(self.0.as_bytes())[..12].to_string()
    }

    /// Whether echoed copies of the token can be scrubbed from free text.
    pub fn scrubbable(&self) -> bool {
        self.0.len() >= MIN_SCRUBBED_LEN
    }

    /// Removes the token from text a server may have echoed it in.
    pub fn scrub(&self, text: &str) -> String {
        if !self.scrubbable() || !text.contains(&self.0) {
            text.to_string()
        } else {
            text.replace(&self.0, "<redacted>")
        }
    }

    /// Removes the token from every string inside a JSON value.
    pub fn scrub_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) if !self.0.is_empty() && s.contains(&self.0) => {
                *s = self.scrub(s)
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_json(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.scrub_json(v)),
            _ => {}
        }
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
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
    fn a_too_short_token_is_not_scrubbed_from_text() {
        let secret = Secret::new("t");
        assert_eq!(secret.scrub("content-type"), "content-type");
        assert!(!secret.scrubbable());
    }
}

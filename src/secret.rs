//! The bearer token, held so that it cannot be printed by accident: its Debug and Display are
//! redacted, and every recorded text passes through [`Secret::scrub`], which knows the forms a
//! server commonly echoes it in: raw, JSON-escaped, percent-encoded (either hex case, `+` for
//! space), base64 (standard and URL-safe, with or without padding) and those split into lines
//! at the widths MIME and PEM wrap at. A fixed set of forms, each searched for as it is: the
//! cost of a secret is a few copies of it, whatever its length.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;

/// What the Authorization header is written as in every record.
/// What stands in a record where a secret was.
pub(crate) const REDACTED: &str = "<redacted>";
pub(crate) const REDACTED_BEARER: &str = "Bearer <redacted>";

/// Shorter tokens cannot be told apart from ordinary text: scrubbing them would corrupt the
/// evidence (a one-letter token is in every word), so they are only kept out of headers.
pub(crate) const MIN_SCRUBBED_LEN: usize = 8;

#[derive(Clone)]
pub(crate) struct Secret(String, Arc<[String]>);

/// Every spelling of `token` worth scrubbing, longest first (a padded base64 before the
/// unpadded one it starts with).
fn forms(token: &str) -> Vec<String> {
    let mut forms = vec![token.to_string()];
    // JSON: as serde writes it, with `\/` for `/`, and with every character `\uXXXX`.
    let json = serde_json::to_string(token).unwrap_or_default();
    let json = json[1..json.len().saturating_sub(1).max(1)].to_string();
    forms.push(json.replace('/', "\\/"));
    forms.push(json);
    // `\uXXXX` or `%XX` for every character, for those not alphanumeric, or for those not
    // URL-unreserved (alphanumeric or `-._~`): the sets encoders pick, in either hex case.
    let sets: [&dyn Fn(char) -> bool; 3] = [&|_| true, &|c| !c.is_ascii_alphanumeric(), &|c| {
        !c.is_ascii_alphanumeric() && !"-._~".contains(c)
    }];
    let bmp = token.chars().all(|c| (c as u32) < 0x10000);
    for which in sets {
        if bmp {
            forms.push(escaped(token, which, |c| format!("\\u{:04x}", c as u32)));
            forms.push(escaped(token, which, |c| format!("\\u{:04X}", c as u32)));
        }
        let percent = |c: char| {
            let mut utf8 = [0u8; 4];
            (c.encode_utf8(&mut utf8).bytes())
                .map(|b| format!("%{b:02X}"))
                .collect::<String>()
        };
        let encoded = escaped(token, which, percent);
        forms.push(encoded.to_lowercase_hex());
        forms.push(encoded);
    }
    // As a form encodes it (`+` for a space).
    let form: String = url::form_urlencoded::byte_serialize(token.as_bytes()).collect();
    forms.push(form.to_lowercase_hex());
    forms.push(form);
    for engine in [
        &base64::engine::general_purpose::STANDARD,
        &base64::engine::general_purpose::URL_SAFE,
    ] {
        let encoded = engine.encode(token.as_bytes());
        for width in [64, 76] {
            for newline in ["\n", "\r\n", "\\n", "\\r\\n"] {
                forms.push(wrapped(&encoded, width, newline));
            }
        }
        forms.push(encoded.trim_end_matches('=').to_string());
        forms.push(encoded);
    }
    for newline in ["\n", "\r\n"] {
        forms.push(wrapped(token, 64, newline));
        forms.push(wrapped(token, 76, newline));
    }
    forms.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    forms.dedup();
    forms
}

/// `token` with the characters `which` picks written as `how` says.
fn escaped(token: &str, which: &dyn Fn(char) -> bool, how: impl Fn(char) -> String) -> String {
    (token.chars())
        .map(|c| if which(c) { how(c) } else { c.to_string() })
        .collect()
}

/// `text` split into lines of `width`, joined by `newline`.
fn wrapped(text: &str, width: usize, newline: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    (chars.chunks(width))
        .map(|line| line.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join(newline)
}

/// `%2F` → `%2f`: the other hex case of a percent-encoded text.
trait LowercaseHex {
    fn to_lowercase_hex(&self) -> String;
}

impl LowercaseHex for String {
    fn to_lowercase_hex(&self) -> String {
        let mut out = String::with_capacity(self.len());
        let mut after_percent = 0;
        for c in self.chars() {
            if c == '%' {
                after_percent = 2;
                out.push(c);
            } else if after_percent > 0 {
                after_percent -= 1;
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    }
}

impl Secret {
    pub(crate) fn new(token: impl Into<String>) -> Secret {
        let token = token.into();
        let forms = match token.len() >= MIN_SCRUBBED_LEN {
            true => forms(&token),
            false => Vec::new(),
        };
        Secret(token, forms.into())
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
        let mut text = std::borrow::Cow::Borrowed(text);
        for form in self.1.iter() {
            if text.contains(form.as_str()) {
                text = std::borrow::Cow::Owned(text.replace(form.as_str(), REDACTED));
            }
        }
        text.into_owned()
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
    fn split_copies_of_a_long_token_are_scrubbed_at_a_cost_of_a_few_copies() {
        let token: String = (0..3000).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        let secret = Secret::new(token.as_str());
        let b64 = base64::engine::general_purpose::STANDARD.encode(&token);
        let mime = wrapped(&b64, 76, "\r\n");
        let json_pem = serde_json::to_string(&wrapped(&b64, 64, "\n")).unwrap();
        for echoed in [mime, json_pem, wrapped(&token, 64, "\n")] {
            let scrubbed = secret.scrub(&format!("said: {echoed}"));
            assert!(!scrubbed.contains(&token[..100]) && !scrubbed.contains(&b64[..100]));
        }
        let held: usize = secret.1.iter().map(String::len).sum();
        assert!(held < 200 * token.len(), "{held} bytes for {}", token.len());
    }

    #[test]
    fn a_too_short_token_is_not_scrubbed_from_text() {
        let secret = Secret::new("t");
        assert_eq!(secret.scrub("content-type"), "content-type");
        assert!(!secret.scrubbable());
    }
}

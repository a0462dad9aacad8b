//! The bearer token, held so that it cannot be printed by accident: its Debug and Display are
//! redacted, and every recorded text passes through [`Secret::scrub`], which knows the forms a
//! server commonly echoes it in: raw, JSON-escaped, percent-encoded (any mixture of encoded and
//! plain characters, either hex case, `+` for space: what every URL encoder writes, whichever
//! characters it leaves alone), base64 (standard and URL-safe, with or without padding) and
//! those split into lines at the widths MIME and PEM wrap at. A fixed set of forms, each
//! searched for as it is, and one pattern for the percent-encodings: the cost of a secret is
//! a few copies of it, whatever its length. The same holds for any header value whose name
//! says it is a credential ([`names_a_credential`]).

use std::borrow::Cow;
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

/// The token, its spellings (longest first), and what searches for them ([`Searchers`]).
#[derive(Clone)]
pub(crate) struct Secret(String, Arc<[String]>, Arc<Searchers>);

/// The pattern of the token's percent-encodings, and one automaton over its spellings (a text
/// is searched once, not once per spelling), each built when a text first needs it: building
/// both took a default batch's start about 1 ms per secret, and most runs never meet a `%`.
#[derive(Default)]
struct Searchers {
    pattern: std::sync::OnceLock<Option<regex::Regex>>,
    automaton: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>>,
}

/// Words in a header's name that say its value is a credential (compared ignoring case, as
/// parts of the name): `X-Api-Key`, `X-Gateway-Token`, `X-Client-Secret`, `X-Signature`...
pub(crate) const CREDENTIAL_WORDS: [&str; 8] = [
    "key",
    "token",
    "secret",
    "auth",
    "signature",
    "session",
    "cookie",
    "password",
];

/// Whether a header named `name` carries a credential, whatever gave its value: its name holds
/// one of [`CREDENTIAL_WORDS`]. An idempotency key names a request, not a caller.
pub(crate) fn names_a_credential(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let idempotency = matches!(lower.as_str(), "idempotency-key" | "x-idempotency-key");
    !idempotency && CREDENTIAL_WORDS.iter().any(|word| lower.contains(word))
}

/// Longest secret whose percent-encodings are matched by one pattern (past it, the fixed
/// percent forms alone): the pattern grows with the secret.
const MAX_PATTERNED_LEN: usize = 4096;

/// Every percent-encoding of `token`: each character as itself or as `%XX` per UTF-8 byte,
/// in either hex case (a space also as `+`), so encoders that leave different characters
/// alone (`encodeURIComponent`, Python's `quote` keeping `/`, form encoding) are all matched.
fn percent_pattern(token: &str) -> Option<regex::Regex> {
    if token.len() > MAX_PATTERNED_LEN {
        return None;
    }
    let mut pattern = String::with_capacity(token.len() * 16);
    for c in token.chars() {
        pattern.push_str("(?:");
        pattern.push_str(&regex::escape(c.encode_utf8(&mut [0u8; 4])));
        if c == ' ' {
            pattern.push_str("|\\+");
        }
        pattern.push('|');
        for b in c.encode_utf8(&mut [0u8; 4]).bytes() {
            pattern.push_str(&format!("%(?:{b:02X}|{b:02x})"));
        }
        pattern.push(')');
    }
    regex::Regex::new(&pattern).ok()
}

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
        Secret(token, forms.into(), Arc::default())
    }

    /// The automaton over the spellings. Leftmost-longest: where spellings overlap, the longer
    /// one goes whole. A contiguous NFA, not the DFA the builder would pick for so few
    /// patterns: it builds in a fraction of the time, and the search is the prefilter's.
    fn automaton(&self) -> Option<&aho_corasick::AhoCorasick> {
        let build = || {
            (!self.1.is_empty())
                .then(|| {
                    aho_corasick::AhoCorasick::builder()
                        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                        .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                        .build(self.1.iter())
                        .ok()
                })
                .flatten()
        };
        self.2.automaton.get_or_init(build).as_ref()
    }

    /// The pattern of the token's percent-encodings.
    fn pattern(&self) -> Option<&regex::Regex> {
        let build = || {
            (!self.1.is_empty())
                .then(|| percent_pattern(&self.0))
                .flatten()
        };
        self.2.pattern.get_or_init(build).as_ref()
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
        self.scrub_cow(text).into_owned()
    }

    /// [`Secret::scrub`], borrowing the text back when there was nothing to remove (most
    /// texts): nothing is copied then.
    pub(crate) fn scrub_cow<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut text = Cow::Borrowed(text);
        // Every spelling, and every percent-encoding, is at least as long as the shortest
        // spelling: a shorter text (most header values) holds none.
        if self
            .1
            .last()
            .is_none_or(|shortest| text.len() < shortest.len())
        {
            return text;
        }
        match self.automaton() {
            Some(automaton) => {
                if automaton.is_match(text.as_ref()) {
                    let mut out = String::with_capacity(text.len());
                    automaton.replace_all_with(&text, &mut out, |_, _, out| {
                        out.push_str(REDACTED);
                        true
                    });
                    text = Cow::Owned(out);
                }
            }
            None => {
                for form in self.1.iter() {
                    if text.contains(form.as_str()) {
                        text = Cow::Owned(text.replace(form.as_str(), REDACTED));
                    }
                }
            }
        }
        // Any other percent-encoding holds a `%`: most texts are spared the pattern.
        if let Some(pattern) = Some(&text).filter(|t| t.contains('%')).and(self.pattern())
            && let Cow::Owned(replaced) = pattern.replace_all(&text, REDACTED)
        {
            text = Cow::Owned(replaced);
        }
        text
    }

    /// The first `keep` bytes of `bytes` as text, scrubbed, and whether that cut anything:
    /// only as much is read as a secret straddling the cut needs, so a large body costs what
    /// is kept, not its size (a 1 MiB body was scrubbed whole, every form searched over it).
    pub(crate) fn scrub_prefix(&self, bytes: &[u8], keep: usize) -> (String, bool) {
        if bytes.len() <= keep {
            return (self.scrub(&String::from_utf8_lossy(bytes)), false);
        }
        let longest = self.1.first().map_or(0, String::len);
        // The window reaches past the cut by a secret (straddling it) and by the tail dropped
        // below, so that text without secrets keeps `keep` bytes.
        let reach = keep + 2 * (longest + 3);
        let window = String::from_utf8_lossy(&bytes[..reach.min(bytes.len())]);
        let scrubbed = self.scrub(&window);
        // A secret running past the window was not matched: its start is within the window's
        // last `longest` bytes (a character cut by the window adds at most 3), so those go.
        let whole = scrubbed.len().saturating_sub(longest + 3);
        let end = scrubbed.floor_char_boundary(keep.min(whole));
        (scrubbed[..end].to_string(), true)
    }

    /// Removes the token from every string and every key inside a JSON value.
    pub(crate) fn scrub_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                if let Cow::Owned(scrubbed) = self.scrub_cow(s) {
                    *s = scrubbed;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_json(v)),
            serde_json::Value::Object(map) => {
                let renamed = (map.keys()).any(|k| matches!(self.scrub_cow(k), Cow::Owned(_)));
                if !renamed {
                    // The usual case: the map is kept, only its values are looked into.
                    map.values_mut().for_each(|v| self.scrub_json(v));
                    return;
                }
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
    fn any_mixture_of_percent_encoded_and_plain_characters_is_scrubbed() {
        let secret = Secret::new("gw/key+v=1 ok");
        for echoed in [
            "gw/key%2Bv%3D1%20ok", // Python's quote: `/` kept
            "gw%2Fkey%2bv%3d1+ok", // form encoding, lower hex
            "%67%77%2F%6B%65%79%2B%76%3D%31%20%6F%6B",
            "gw/key+v=1%20ok", // encodeURI
        ] {
            let scrubbed = secret.scrub(&format!("https://x/?next={echoed}&a=1"));
            assert_eq!(scrubbed, "https://x/?next=<redacted>&a=1", "{echoed}");
        }
        assert_eq!(secret.scrub("100% gw/key"), "100% gw/key");
    }

    #[test]
    fn header_names_that_say_credential_are_known_whatever_their_case() {
        for name in [
            "X-Api-Key",
            "x-gateway-token",
            "X-CLIENT-SECRET",
            "X-Auth-User",
            "X-Signature",
            "X-Session-Id",
            "Cookie",
            "X-Password",
        ] {
            assert!(names_a_credential(name), "{name}");
        }
        for name in [
            "Idempotency-Key",
            "X-Request-Id",
            "Accept-Language",
            "traceparent",
        ] {
            assert!(!names_a_credential(name), "{name}");
        }
    }

    #[test]
    fn a_cut_body_is_scrubbed_up_to_the_cut_even_when_a_secret_straddles_it() {
        let token = "sk_live+ab/cd==ef12";
        let secret = Secret::new(token);
        let b64 = base64::engine::general_purpose::STANDARD.encode(token);
        for echoed in [
            token.to_string(),
            b64.clone(),
            "sk_live%2Bab/cd%3D%3Def12".into(),
        ] {
            for at in [90, 95, 99, 100, 101] {
                let text = format!("{}{echoed}{}", "x".repeat(at), "y".repeat(5000));
                let (kept, cut) = secret.scrub_prefix(text.as_bytes(), 100);
                assert!(cut && kept.len() <= 100, "{at}: {kept}");
                for n in 4..echoed.len() {
                    assert!(!kept.ends_with(&echoed[..n]), "{at}: {kept}");
                }
                assert!(!kept.contains(&echoed), "{at}: {kept}");
            }
        }
        let (whole, cut) = secret.scrub_prefix(format!("a {token} b").as_bytes(), 100);
        assert_eq!((whole.as_str(), cut), ("a <redacted> b", false));
    }

    #[test]
    fn a_too_short_token_is_not_scrubbed_from_text() {
        let secret = Secret::new("t");
        assert_eq!(secret.scrub("content-type"), "content-type");
        assert!(!secret.scrubbable());
    }
}

//! Webhook signature schemes, shared by the sandbox (which signs) and ppcert (which verifies): the provider's documented one (`Koala-Signature`: hex
//! HMAC-SHA256 of the raw body, `Webhook-Version: v2`), Standard Webhooks (`webhook-id`,
//! `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC of "id.timestamp.body">`) and
//! GitHub's (`X-Hub-Signature-256: sha256=<hex>`). Signing and verifying use the `hmac` crate,
//! whose verification compares in constant time.

use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// How far a Standard Webhooks timestamp may be from now.
pub const TOLERANCE_SECS: i64 = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheme {
    /// The provider's documented scheme.
    #[default]
    ProviderDocs,
    StandardWebhooks,
    Github,
}

impl Scheme {
    pub const ALL: [Scheme; 3] = [
        Scheme::ProviderDocs,
        Scheme::StandardWebhooks,
        Scheme::Github,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scheme::ProviderDocs => "provider-docs",
            Scheme::StandardWebhooks => "standard-webhooks",
            Scheme::Github => "github",
        }
    }

    pub fn parse(name: &str) -> Result<Scheme, String> {
        match name {
            "provider-docs" => Ok(Scheme::ProviderDocs),
            "standard-webhooks" => Ok(Scheme::StandardWebhooks),
            "github" => Ok(Scheme::Github),
            other => Err(format!(
                "unknown webhook scheme `{other}` (provider-docs, standard-webhooks, github)"
            )),
        }
    }
}

/// A delivery as it arrived: the headers that matter (lower-case names) and the raw body.
pub struct Delivery<'a> {
    pub header: &'a dyn Fn(&str) -> Option<String>,
    pub body: &'a [u8],
}

/// Why a delivery was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    MissingSignature(&'static str),
    WrongSignature,
    StaleTimestamp(i64),
    Malformed(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::MissingSignature(header) => write!(f, "no {header} header"),
            Refusal::WrongSignature => f.write_str("the signature does not match the body"),
            Refusal::StaleTimestamp(skew) => {
                write!(
                    f,
                    "the timestamp is {skew} s from now (more than {TOLERANCE_SECS} s)"
                )
            }
            Refusal::Malformed(why) => f.write_str(why),
        }
    }
}

/// The prefix of a Standard Webhooks secret: what follows it is the key, base64-encoded.
pub const STANDARD_SECRET_PREFIX: &str = "whsec_";

/// The HMAC key a secret stands for. Standard Webhooks secrets are `whsec_<base64>` and the
/// key is the decoded bytes (the specification, and its official libraries); any other secret,
/// and a secret without the prefix, is used as its bytes, as the other schemes do.
pub fn signing_key(scheme: Scheme, secret: &[u8]) -> Result<Vec<u8>, String> {
    let encoded = match secret.strip_prefix(STANDARD_SECRET_PREFIX.as_bytes()) {
        Some(encoded) if scheme == Scheme::StandardWebhooks => encoded,
        _ => return Ok(secret.to_vec()),
    };
    // The official libraries accept unpadded base64 too.
    let trimmed: Vec<u8> = encoded.iter().copied().filter(|b| *b != b'=').collect();
    let key = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(&trimmed)
        .map_err(|_| {
            format!("a {STANDARD_SECRET_PREFIX} secret must be base64 after its prefix (Standard Webhooks)")
        })?;
    if key.is_empty() {
        return Err(format!("the {STANDARD_SECRET_PREFIX} secret is empty"));
    }
    Ok(key)
}

/// The key for HMAC: a secret that fails to decode is used as given, so it verifies nothing
/// a real sender signed (callers check secrets with [`signing_key`] when they load them).
fn key_of(scheme: Scheme, secret: &[u8]) -> Vec<u8> {
    signing_key(scheme, secret).unwrap_or_else(|_| secret.to_vec())
}

fn mac(secret: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes a key of any length");
    for part in parts {
        mac.update(part);
    }
    mac
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    (text.len().is_multiple_of(2))
        .then(|| {
            (0..text.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
                .collect()
        })
        .flatten()
}

/// The headers to send `body` with: `id` and `timestamp` matter to Standard Webhooks only.
pub fn sign(
    scheme: Scheme,
    secret: &[u8],
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    match scheme {
        Scheme::ProviderDocs => vec![
            (
                "koala-signature",
                hex(&mac(secret, &[body]).finalize().into_bytes()),
            ),
            ("webhook-version", "v2".into()),
        ],
        Scheme::Github => vec![(
            "x-hub-signature-256",
            format!(
                "sha256={}",
                hex(&mac(secret, &[body]).finalize().into_bytes())
            ),
        )],
        Scheme::StandardWebhooks => {
            let stamp = timestamp.to_string();
            let key = key_of(scheme, secret);
            let signed = mac(&key, &[id.as_bytes(), b".", stamp.as_bytes(), b".", body]);
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(signed.finalize().into_bytes());
            vec![
                ("webhook-id", id.to_string()),
                ("webhook-timestamp", stamp),
                ("webhook-signature", format!("v1,{encoded}")),
            ]
        }
    }
}

/// Checks a delivery's signature on its raw bytes (constant-time comparison), and the
/// timestamp where the scheme has one. Ok carries the delivery's id when the scheme gives one.
pub fn verify(
    scheme: Scheme,
    secret: &[u8],
    delivery: &Delivery,
    now: i64,
) -> Result<Option<String>, Refusal> {
    let header =
        |name: &'static str| (delivery.header)(name).ok_or(Refusal::MissingSignature(name));
    match scheme {
        Scheme::ProviderDocs | Scheme::Github => {
            let (name, prefix) = if scheme == Scheme::Github {
                ("x-hub-signature-256", "sha256=")
            } else {
                ("koala-signature", "")
            };
            let given = header(name)?;
            let given = given
                .trim()
                .strip_prefix(prefix)
                .and_then(unhex)
                .ok_or(Refusal::WrongSignature)?;
            mac(secret, &[delivery.body])
                .verify_slice(&given)
                .map_err(|_| Refusal::WrongSignature)?;
            Ok(None)
        }
        Scheme::StandardWebhooks => {
            let id = header("webhook-id")?;
            let stamp = header("webhook-timestamp")?;
            let at: i64 = stamp.trim().parse().map_err(|_| {
                Refusal::Malformed(format!("webhook-timestamp `{stamp}` is not a number"))
            })?;
            if (now - at).abs() > TOLERANCE_SECS {
                return Err(Refusal::StaleTimestamp(now - at));
            }
            let signatures = header("webhook-signature")?;
            let signed = [
                id.as_bytes(),
                b".",
                stamp.trim().as_bytes(),
                b".",
                delivery.body,
            ];
            let key = key_of(scheme, secret);
            // A space-separated list, for key rotation: any one valid v1 signature will do.
            let valid = signatures.split_whitespace().any(|entry| {
                entry
                    .strip_prefix("v1,")
                    .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
                    .is_some_and(|given| mac(&key, &signed).verify_slice(&given).is_ok())
            });
            if valid {
                Ok(Some(id))
            } else {
                Err(Refusal::WrongSignature)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn a_whsec_secret_is_base64_decoded_as_the_specification_says() {
        // The test vector of the Standard Webhooks reference libraries.
        let secret = b"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let signed = sign(
            Scheme::StandardWebhooks,
            secret,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            body,
        );
        assert_eq!(
            signed[2].1,
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert!(signing_key(Scheme::StandardWebhooks, b"whsec_not base64!").is_err());
        assert_eq!(signing_key(Scheme::Github, b"whsec_x").unwrap(), b"whsec_x");
    }

    #[test]
    fn the_provider_scheme_matches_an_independent_hmac() {
        // HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog"), RFC 4231-style
        // well-known vector.
        let signed = sign(
            Scheme::ProviderDocs,
            b"key",
            "",
            0,
            b"The quick brown fox jumps over the lazy dog",
        );
        assert_eq!(
            signed[0].1,
            "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
        );
        assert_eq!(signed[1], ("webhook-version", "v2".to_string()));
    }

    #[test]
    fn every_scheme_verifies_its_own_signature_and_refuses_forgeries() {
        let body = br#"{"event":"claim.updated","data":{"claim":{"status":"ACCEPTED"}}}"#;
        for scheme in [
            Scheme::ProviderDocs,
            Scheme::StandardWebhooks,
            Scheme::Github,
        ] {
            let good = headers(sign(scheme, b"s3cret", "msg_1", 1_000, body));
            let ok = verify(
                scheme,
                b"s3cret",
                &Delivery {
                    header: &good,
                    body,
                },
                1_010,
            );
            assert!(ok.is_ok(), "{scheme:?}: {ok:?}");
            let altered = Delivery {
                header: &good,
                body: b"{}",
            };
            assert_eq!(
                verify(scheme, b"s3cret", &altered, 1_010),
                Err(Refusal::WrongSignature)
            );
            let other_key = verify(
                scheme,
                b"other",
                &Delivery {
                    header: &good,
                    body,
                },
                1_010,
            );
            assert_eq!(other_key, Err(Refusal::WrongSignature), "{scheme:?}");
            let none = headers(vec![]);
            assert!(matches!(
                verify(
                    scheme,
                    b"s3cret",
                    &Delivery {
                        header: &none,
                        body
                    },
                    1_010
                ),
                Err(Refusal::MissingSignature(_))
            ));
        }
    }

    #[test]
    fn a_standard_webhooks_signature_too_old_is_refused_as_stale() {
        let body = br#"{"event":"claim.updated","data":{"claim":{"status":"ACCEPTED"}}}"#;
        let good = headers(sign(
            Scheme::StandardWebhooks,
            b"s3cret",
            "msg_1",
            1_000,
            body,
        ));
        let stale = verify(
            Scheme::StandardWebhooks,
            b"s3cret",
            &Delivery {
                header: &good,
                body,
            },
            2_000,
        );
        assert_eq!(stale, Err(Refusal::StaleTimestamp(1_000)));
    }
}

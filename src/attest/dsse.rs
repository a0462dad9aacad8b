//! DSSE (Dead Simple Signing Envelope, v1): the envelope `attestation.intoto.json` is, and the
//! pre-authentication encoding its signatures cover.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};

/// The payload type of an in-toto statement.
pub(crate) const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Envelope {
    pub payload_type: String,
    /// Base64 (standard alphabet, padded) of the payload's bytes.
    pub payload: String,
    pub signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct EnvelopeSignature {
    #[serde(default)]
    pub keyid: String,
    /// Base64 of the Ed25519 signature over [`pae`].
    pub sig: String,
}

/// A DSSE envelope whose payload is not an in-toto statement's bytes.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PayloadError {
    #[error("payloadType is `{payload_type}`, not `{}`", PAYLOAD_TYPE)]
    OtherType { payload_type: String },
    #[error("the payload is not base64: {0}")]
    NotBase64(base64::DecodeError),
}

/// DSSE's pre-authentication encoding: `DSSEv1 SP LEN(type) SP type SP LEN(body) SP body`,
/// lengths in ASCII decimal. Signing this, not the payload, binds the payload type too.
pub(crate) fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

impl Envelope {
    /// Signs `payload` with `key`, naming the key by `keyid`.
    pub(crate) fn sign(payload: &[u8], key: &SigningKey, keyid: &str) -> Envelope {
        let signature = key.sign(&pae(PAYLOAD_TYPE, payload));
        Envelope {
            payload_type: PAYLOAD_TYPE.to_string(),
            payload: STANDARD.encode(payload),
            signatures: vec![EnvelopeSignature {
                keyid: keyid.to_string(),
                sig: STANDARD.encode(signature.to_bytes()),
            }],
        }
    }

    /// The payload's bytes, and an error unless it is an in-toto payload.
    pub(crate) fn payload(&self) -> Result<Vec<u8>, PayloadError> {
        if self.payload_type != PAYLOAD_TYPE {
            let payload_type = self.payload_type.clone();
            return Err(PayloadError::OtherType { payload_type });
        }
        STANDARD
            .decode(&self.payload)
            .map_err(PayloadError::NotBase64)
    }

    /// Whether one of the signatures is `key`'s over the envelope's payload.
    pub(crate) fn signed_by(&self, key: &VerifyingKey) -> bool {
        let Ok(payload) = STANDARD.decode(&self.payload) else {
            return false;
        };
        let message = pae(&self.payload_type, &payload);
        self.signatures.iter().any(|s| {
            let bytes = STANDARD.decode(&s.sig).unwrap_or_default();
            Signature::from_slice(&bytes).is_ok_and(|sig| key.verify(&message, &sig).is_ok())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoding from the DSSE specification's test vector.
    #[test]
    fn pae_matches_the_specification() {
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }

    #[test]
    fn a_signature_holds_only_for_its_payload_type_payload_and_key() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let envelope = Envelope::sign(b"{}", &key, "k");
        assert!(envelope.signed_by(&key.verifying_key()));
        let other = SigningKey::from_bytes(&[8; 32]);
        assert!(!envelope.signed_by(&other.verifying_key()));
        let mut retyped = envelope.clone();
        retyped.payload_type = "application/json".into();
        assert!(!retyped.signed_by(&key.verifying_key()));
        let mut changed = envelope;
        changed.payload = STANDARD.encode(b"{ }");
        assert!(!changed.signed_by(&key.verifying_key()));
    }

    #[test]
    fn only_an_in_toto_payload_in_base64_is_read() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let mut envelope = Envelope::sign(b"{}", &key, "k");
        assert_eq!(envelope.payload().unwrap(), b"{}");
        envelope.payload = "not base64!".into();
        assert!(matches!(
            envelope.payload(),
            Err(PayloadError::NotBase64(_))
        ));
        envelope.payload_type = "application/json".into();
        assert!(matches!(
            envelope.payload(),
            Err(PayloadError::OtherType { payload_type }) if payload_type == "application/json"
        ));
    }
}

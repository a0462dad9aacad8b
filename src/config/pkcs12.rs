//! A client certificate from a PKCS#12 archive (`[target] client_pkcs12`, its password read
//! from the variable `client_pkcs12_password_env` names), turned into the PEM chain and key
//! the HTTP client takes. Parsed by p12-keystore (pure Rust); the key is never shown.

use base64::Engine as _;

/// The archive's first certificate chain and its key, as PEM (certificates, then the key);
/// else what is wrong with the archive, in words that never quote it.
pub(super) fn pem_from_pkcs12(bytes: &[u8], password: &str) -> Result<Vec<u8>, String> {
    // The crate's errors say what failed (a wrong password, a MAC mismatch, an unknown
    // algorithm), never the key.
    let store = p12_keystore::KeyStore::from_pkcs12(
        bytes,
        password,
        p12_keystore::Pkcs12ImportPolicy::Relaxed,
    )
    .map_err(|e| format!("not a PKCS#12 archive this password opens ({e})"))?;
    let (_, chain) = store
        .private_key_chain()
        .ok_or_else(|| "holds no private key with its certificate".to_string())?;
    if chain.certs().is_empty() {
        return Err("holds a private key but no certificate".to_string());
    }
    let mut pem = String::new();
    for cert in chain.certs() {
        pem.push_str(&block("CERTIFICATE", cert.as_der()));
    }
    pem.push_str(&block("PRIVATE KEY", chain.key().as_der()));
    Ok(pem.into_bytes())
}

/// One PEM block, its base64 in lines of 64.
fn block(label: &str, der: &[u8]) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in encoded.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

//! The TLS stack every HTTP client of ppcert uses.

/// rustls on `ring`: a TLS stack that builds with no C toolchain or cmake (aws-lc-sys
/// was most of a cold build). Installing twice is harmless, so every client may ask.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

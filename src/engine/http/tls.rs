//! The process-wide rustls provider, for the tests' and benchmarks' own TLS servers and
//! clients: ppcert's clients name theirs (`config/http.rs`) and need none installed.

/// rustls on `ring`: a TLS stack that builds with no C toolchain or cmake (aws-lc-sys
/// was most of a cold build). Installing twice is harmless, so every test may ask.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

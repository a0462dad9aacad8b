//! Servers for tests on ephemeral loopback ports: a sandbox (with the test's options, or claims
//! that move every 50 ms) and a router of the test's own; and a client as the binary makes one.

use crate::options::SandboxOptions;
use crate::server::Sandbox;

pub async fn sandbox_with(options: SandboxOptions) -> Sandbox {
    Sandbox::start(options)
        .await
        .expect("sandbox starts on loopback")
}

pub async fn sandbox() -> Sandbox {
    sandbox_with(SandboxOptions::default()).await
}

/// Options for a sandbox whose claims move on every 50 ms instead of every 2 s, so a test
/// sees a claim reach its last status without waiting; the rest as `SandboxOptions::default()`.
pub fn fast_options() -> SandboxOptions {
    SandboxOptions {
        claim_step: std::time::Duration::from_millis(50),
        ..SandboxOptions::default()
    }
}

/// A plain reqwest client; the ring TLS provider is installed first, as the binary does.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// Serves `router` on an ephemeral loopback port; returns its base URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    base
}

//! A staging behind TLS signed by a private CA, as a TLS-inspecting corporate proxy or an
//! internal staging presents it: untrusted, `run`'s error and the proxy's answer name
//! `--cacert`; with `--cacert` the root is trusted by `check-token` and by `ppcert proxy`'s
//! upstream client alike.

use std::sync::Arc;

use axum::http::StatusCode;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::common::*;

pub(crate) fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/fixtures")
        .join(name)
}

/// TLS connections on a loopback port; a handshake the client aborts is skipped.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// The request id the private CA's staging gives every answer, as a provider's gateway does.
pub(crate) const REQUEST_ID: &str = "req-7f3a";

/// An https staging on loopback whose certificate only the private CA vouches for; it
/// answers every request 201 with a quote.
pub(crate) async fn private_ca_staging() -> String {
    private_ca_staging_offering(Vec::new()).await
}

/// [`private_ca_staging`], its TLS offering these ALPN protocols in its order of preference
/// (as a gateway offering HTTP/2 does).
async fn private_ca_staging_offering(alpn: Vec<Vec<u8>>) -> String {
    ppcert::engine::http::install_crypto_provider();
    let certs = CertificateDer::pem_file_iter(fixture("staging.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(fixture("staging-key.pem")).unwrap();
    let mut config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = alpn;
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let listener = TlsListener {
        tcp,
        acceptor: TlsAcceptor::from(Arc::new(config)),
    };
    let router = axum::Router::new().fallback(|| async {
        (
            StatusCode::CREATED,
            [("x-request-id", REQUEST_ID)],
            axum::Json(serde_json::json!({"data": {"id": "qt_1", "reference": "QR-1"}})),
        )
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("https://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_certificate_names_cacert_and_cacert_trusts_it() {
    let base = private_ca_staging().await;
    let dir = tempfile::tempdir().unwrap();
    let token = Some("a-staging-token-0123456789");
    let untrusted = ppcert(dir.path(), &["check-token", "--base-url", &base], token).await;
    assert_eq!(untrusted.code, 4, "{}", untrusted.stderr);
    assert!(
        untrusted
            .stderr
            .contains("pass its root certificate with --cacert FILE"),
        "{}",
        untrusted.stderr
    );
    let trusted = check_token_trusting_the_ca(dir.path(), &base).await;
    assert_eq!(trusted.code, 0, "{}\n{}", trusted.stdout, trusted.stderr);
}

/// `check-token` against `base` with the private CA passed as `--cacert`.
async fn check_token_trusting_the_ca(dir: &std::path::Path, base: &str) -> Finished {
    let ca = fixture("private-ca.pem");
    let args = [
        "check-token",
        "--base-url",
        base,
        "--cacert",
        ca.to_str().unwrap(),
    ];
    ppcert(dir, &args, Some("a-staging-token-0123456789")).await
}

/// Most gateways (a load balancer, a CDN, nginx with http2) prefer HTTP/2: ppcert must be
/// answered over HTTP/1.1 there, never pick a protocol it cannot speak (it once panicked).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staging_preferring_http2_is_reached_over_http1() {
    let base = private_ca_staging_offering(vec![b"h2".to_vec(), b"http/1.1".to_vec()]).await;
    let dir = tempfile::tempdir().unwrap();
    let checked = check_token_trusting_the_ca(dir.path(), &base).await;
    assert_eq!(checked.code, 0, "{}\n{}", checked.stdout, checked.stderr);
    assert!(!checked.stderr.contains("panicked"), "{}", checked.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_reaches_a_private_ca_staging_with_cacert_and_says_so_without() {
    let base = private_ca_staging().await;
    let ca = fixture("private-ca.pem");
    // The partner's suite: one quote through the proxy.
    let suite = r#"exec "$PPCERT_BIN" run --base-url "$PPCERT_PROXY_URL" --scenario smoke --out inner --no-progress"#;
    for trusted in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["proxy", "--out", "b", "--base-url", &base];
        if trusted {
            args.extend_from_slice(&["--cacert", ca.to_str().unwrap()]);
        }
        args.extend_from_slice(&["--", "sh", "-c", suite]);
        let output = ppcert_command(dir.path(), &args, Some("a-staging-token-0123456789"))
            .env("PPCERT_BIN", env!("CARGO_BIN_EXE_ppcert"))
            .output()
            .await
            .unwrap();
        let evidence = read_json(&dir.path().join("b/evidence.json"));
        let exchange = &evidence["exchanges"][0];
        if trusted {
            assert_eq!(exchange["response"]["status"], 201, "{exchange}");
        } else {
            assert_ne!(
                output.status.code(),
                Some(0),
                "the suite could not reach staging"
            );
            let error = exchange["error"].as_str().unwrap_or_default();
            assert!(error.contains("--cacert FILE"), "{exchange}");
        }
    }
}

//! How the sandbox can be reached, to test a client against a staging's transport: answers
//! compressed with gzip when the client asks for it, headers every API call must carry (a
//! version header, a gateway key), and HTTPS with a certificate from a private CA, optionally
//! requiring a client certificate signed by a CA of its own.

use std::io::Write as _;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt as _;

use crate::options::TlsIdentity;
use crate::shared::Shared;
use crate::validate::ApiFailure;

/// `NAME: VALUE` as `--require-header` takes it.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("`{text}`: expected NAME: VALUE"))?;
    let (name, value) = (name.trim(), value.trim());
    if name.is_empty() || axum::http::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(format!("`{name}` is not a header name"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Refuses an API call lacking a required header, in the words a gateway uses: a missing key
/// (a header whose name says `key`) is a 401 that is not about the bearer token, anything
/// else a 400 naming the header and the value it needs.
pub(crate) async fn require_headers(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    for (name, value) in &shared.options.transport.required_headers {
        let given = request
            .headers()
            .get(name.as_str())
            .map(HeaderValue::as_bytes);
        if given == Some(value.as_bytes()) {
            continue;
        }
        if name.to_ascii_lowercase().contains("key") {
            let message = format!("missing gateway key: send the header {name}");
            let mut refusal =
                ApiFailure::new(StatusCode::UNAUTHORIZED, "GATEWAY_KEY_MISSING", message)
                    .into_response();
            refusal.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("ApiKey realm=\"gateway\""),
            );
            return refusal;
        }
        let message = format!("this API needs the header {name}: {value}");
        return ApiFailure::new(StatusCode::BAD_REQUEST, "MISSING_HEADER", message).into_response();
    }
    next.run(request).await
}

/// Gzips the answer when the sandbox is told to and the client accepts gzip.
pub(crate) async fn compress(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let accepts = request
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(accepts_gzip);
    let response = next.run(request).await;
    if !shared.options.transport.gzip || !accepts {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(collected) = body.collect().await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let bytes = collected.to_bytes();
    if bytes.is_empty() {
        return Response::from_parts(parts, Body::empty());
    }
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let gzipped = encoder.write_all(&bytes).and_then(|()| encoder.finish());
    let Ok(gzipped) = gzipped else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts
        .headers
        .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    Response::from_parts(parts, Body::from(gzipped))
}

/// Whether an `Accept-Encoding` value lists gzip (or `*`) with a weight above zero.
pub(crate) fn accepts_gzip(value: &str) -> bool {
    value.split(',').any(|item| {
        let mut parts = item.split(';').map(str::trim);
        let coding = parts.next().unwrap_or_default().to_ascii_lowercase();
        let weight = parts
            .filter_map(|p| p.strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        (coding == "gzip" || coding == "*") && weight > 0.0
    })
}

/// The rustls server configuration of a [`TlsIdentity`]; an unreadable PEM is an error
/// naming which part it was.
pub(crate) fn server_config(identity: &TlsIdentity) -> std::io::Result<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let invalid = |what: &str, e: &dyn std::fmt::Display| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{what}: {e}"))
    };
    let certs = CertificateDer::pem_slice_iter(&identity.cert_chain_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid("TLS certificate", &e))?;
    let key =
        PrivateKeyDer::from_pem_slice(&identity.key_pem).map_err(|e| invalid("TLS key", &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid("TLS", &e))?;
    let builder = match &identity.client_ca_pem {
        None => builder.with_no_client_auth(),
        Some(pem) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| invalid("client CA", &e))?;
                roots.add(cert).map_err(|e| invalid("client CA", &e))?;
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .map_err(|e| invalid("client CA", &e))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| invalid("TLS certificate and key", &e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_accepted_unless_weighted_zero() {
        assert!(accepts_gzip("gzip, deflate, br"));
        assert!(accepts_gzip("br;q=1.0, gzip;q=0.8"));
        assert!(accepts_gzip("*"));
        assert!(!accepts_gzip("gzip;q=0"));
        assert!(!accepts_gzip("br, deflate"));
    }

    #[test]
    fn a_required_header_is_name_colon_value() {
        assert_eq!(
            parse_header("X-Api-Version: 2"),
            Ok(("X-Api-Version".into(), "2".into()))
        );
        assert!(parse_header("X-Api-Version").is_err());
        assert!(parse_header("bad name: 1").is_err());
    }
}

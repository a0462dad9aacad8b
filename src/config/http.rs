//! The one place ppcert builds an HTTP client: for the API and its token endpoint, for the
//! proxy's upstream, for `webhook send`. The TLS configuration is built here too, so the
//! system's root certificates are read at most once per process, and only when a TLS
//! handshake needs them: a run against a plain `http://` target never reads them.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use super::tls::{ClientIdentity, TlsError};

/// What a client is for: each use differs only where it must.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// ppcert's own requests (the API, the token endpoint): ppcert names itself.
    Api,
    /// The proxy's upstream and `webhook send`: requests go as they came, with no user agent
    /// of ours added.
    Anonymous,
}

/// The TLS material a client trusts and presents, besides the system's roots.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tls<'a> {
    /// An extra root (`--cacert`), already checked to hold a PEM certificate.
    pub cacert: Option<&'a std::path::Path>,
    /// The client certificate for mutual TLS.
    pub identity: Option<&'a ClientIdentity>,
}

/// A client for `use_`: `timeout` per request (none: as long as it takes), redirects never
/// followed (a redirect is the server's answer, not a place to send a write again), and the
/// server's certificate kept with each answer (the evidence records it).
pub(crate) fn client(
    use_: Use,
    timeout: Option<Duration>,
    tls: Tls<'_>,
) -> Result<reqwest::Client, TlsError> {
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(rustls_config(tls)?)
        .tls_info(true)
        .redirect(reqwest::redirect::Policy::none());
    if let Some(timeout) = timeout {
        builder = builder
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)));
    }
    if use_ == Use::Api {
        builder = builder.user_agent(concat!("ppcert/", env!("CARGO_PKG_VERSION")));
    }
    builder.build().map_err(TlsError::Client)
}

/// rustls on `ring`, trusting the system's roots and `tls.cacert`, presenting `tls.identity`;
/// only HTTP/1.1 offered: ppcert's HTTP client is built without HTTP/2 (a smaller binary), and
/// a gateway that picked `h2` from our offer would get a connection the client cannot speak.
fn rustls_config(tls: Tls<'_>) -> Result<rustls::ClientConfig, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let extra = match tls.cacert {
        Some(path) => cacert(path)?,
        None => Vec::new(),
    };
    let verifier = Arc::new(LazyRoots {
        extra,
        provider: provider.clone(),
        built: OnceLock::new(),
    });
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Setup(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match tls.identity {
        Some(identity) => {
            let (chain, key) = identity_parts(identity.pem())?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| TlsError::Setup(format!("the client certificate: {e}")))?
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The certificates of a `--cacert` file (checked when the staging was resolved, read again
/// here: the client is built from the file as it is now).
fn cacert(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = crate::bounds::read_capped(path, crate::bounds::CA_FILE_BYTES).map_err(|error| {
        TlsError::Unreadable {
            option: "--cacert",
            path: path.to_path_buf(),
            error,
        }
    })?;
    let invalid = |what: String| TlsError::Invalid {
        option: "--cacert",
        path: path.to_path_buf(),
        what,
    };
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("not a PEM certificate: {e}")))?;
    if certs.is_empty() {
        return Err(invalid("holds no PEM certificate".into()));
    }
    Ok(certs)
}

/// The chain and key of a client identity (one PEM buffer, checked when it was read).
fn identity_parts(
    pem: &[u8],
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), TlsError> {
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Setup(format!("the client certificate: {e}")))?;
    // Only the kind of problem is said: rustls's words never quote the key.
    let key = PrivateKeyDer::from_pem_slice(pem)
        .map_err(|_| TlsError::Setup("the client certificate's key is unreadable".into()))?;
    Ok((chain, key))
}

/// The system's root certificates, read once per process, the first time a handshake needs
/// them (about 7 ms: more than the rest of a run's start).
fn system_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| rustls_native_certs::load_native_certs().certs)
}

/// WebPKI over the extra roots and the system's, as rustls-platform-verifier does on Linux,
/// with the verifier built at the first certificate to verify rather than with the client.
#[derive(Debug)]
struct LazyRoots {
    extra: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
    built: OnceLock<Result<Arc<WebPkiServerVerifier>, rustls::Error>>,
}

impl LazyRoots {
    fn verifier(&self) -> Result<&Arc<WebPkiServerVerifier>, rustls::Error> {
        self.built
            .get_or_init(|| {
                let mut roots = rustls::RootCertStore::empty();
                for cert in &self.extra {
                    roots.add(cert.clone())?;
                }
                // As the platform verifier: a system certificate that does not parse is skipped.
                roots.add_parsable_certificates(system_roots().iter().cloned());
                WebPkiServerVerifier::builder_with_provider(roots.into(), self.provider.clone())
                    .build()
                    .map_err(|_| {
                        rustls::Error::General(
                            "no root certificate to verify the server's: the system has none and no --cacert was given".into(),
                        )
                    })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl ServerCertVerifier for LazyRoots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

//! The TLS material of a target: the extra root to trust (`--cacert`, `[target] cacert`) and
//! the client certificate for mutual TLS (`--cert`/`--key`, `[target] client_cert` and
//! `client_key`), read and checked before anything is sent. A key is never shown: errors name
//! the file and what is wrong with it, never its content.

use std::path::{Path, PathBuf};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::file::FileConfig;
use crate::cli::TargetArgs;

/// A client certificate chain and its key, as one PEM buffer (what reqwest's identity takes).
#[derive(Clone)]
pub(crate) struct ClientIdentity {
    /// Held only to build HTTP clients: the key never goes over the wire (TLS proves it
    /// holds it), so nothing ppcert records can carry it.
    pem: Vec<u8>,
}

impl ClientIdentity {
    pub(crate) fn pem(&self) -> &[u8] {
        &self.pem
    }
}

impl std::fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientIdentity(<redacted>)")
    }
}

/// Why the TLS material was refused (exit 2): the option, the file, what is wrong.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsError {
    #[error("{option} {}: cannot read: {error}", path.display())]
    Unreadable {
        option: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{option} {}: {what}", path.display())]
    Invalid {
        option: &'static str,
        path: PathBuf,
        what: String,
    },
    #[error("[target] client_cert and client_key go together: {missing} is missing")]
    Unpaired { missing: &'static str },
    #[error("[target] client_pkcs12 and client_cert/client_key: choose one client certificate")]
    TwoIdentities,
    #[error(
        "[target] client_pkcs12_password_env names {name}, which is not set (or blank): set it to the archive's password"
    )]
    NoPassword { name: String },
    /// The TLS setup refused the material (said without quoting a key).
    #[error("TLS: {0}")]
    Setup(String),
    #[error("cannot build the HTTP client: {0}")]
    Client(reqwest::Error),
}

/// `--cacert`, else `[target] cacert` (already resolved against the file's directory),
/// checked to hold a PEM certificate now: a key or an empty file there would trust nothing.
pub(crate) fn cacert(args: &TargetArgs, file: &FileConfig) -> Result<Option<PathBuf>, TlsError> {
    let (option, path) = match (&args.cacert, &file.target.cacert) {
        (Some(path), _) => ("--cacert", path),
        (None, Some(path)) => ("cacert", path),
        (None, None) => return Ok(None),
    };
    let pem = read(option, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem).collect::<Result<Vec<_>, _>>();
    if !certs.is_ok_and(|certs| !certs.is_empty()) {
        return Err(invalid(option, path, "holds no PEM certificate".into()));
    }
    Ok(Some(path.clone()))
}

/// `--cert`/`--key`, else `[target] client_cert`/`client_key`: read and checked now.
pub(crate) fn client_identity(
    args: &TargetArgs,
    file: &FileConfig,
) -> Result<Option<ClientIdentity>, TlsError> {
    let target = &file.target;
    if target.client_pkcs12.is_some()
        && (target.client_cert.is_some() || target.client_key.is_some())
    {
        return Err(TlsError::TwoIdentities);
    }
    let (cert, key, names) = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => (cert, key, ("--cert", "--key")),
        _ => match (&target.client_cert, &target.client_key) {
            (Some(cert), Some(key)) => (cert, key, ("client_cert", "client_key")),
            (None, None) => return pkcs12_identity(file),
            (Some(_), None) => {
                return Err(TlsError::Unpaired {
                    missing: "client_key",
                });
            }
            (None, Some(_)) => {
                return Err(TlsError::Unpaired {
                    missing: "client_cert",
                });
            }
        },
    };
    let cert_pem = read(names.0, cert)?;
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(names.0, cert, format!("not a PEM certificate ({e})")))?;
    if certs.is_empty() {
        return Err(invalid(names.0, cert, "holds no PEM certificate".into()));
    }
    let key_pem = read(names.1, key)?;
    // Only the kind of problem is said: rustls's words never quote the key.
    PrivateKeyDer::from_pem_slice(&key_pem).map_err(|_| {
        invalid(
            names.1,
            key,
            "holds no PEM private key (PKCS#8, PKCS#1 or SEC1)".into(),
        )
    })?;
    let mut pem = cert_pem;
    pem.push(b'\n');
    pem.extend_from_slice(&key_pem);
    reqwest::Identity::from_pem(&pem).map_err(|e| {
        invalid(
            names.1,
            key,
            format!(
                "does not make a client identity with {}: {e}",
                cert.display()
            ),
        )
    })?;
    Ok(Some(ClientIdentity { pem }))
}

/// `[target] client_pkcs12`, opened with the password from `client_pkcs12_password_env`
/// (none when that is not set).
fn pkcs12_identity(file: &FileConfig) -> Result<Option<ClientIdentity>, TlsError> {
    let Some(path) = &file.target.client_pkcs12 else {
        return Ok(None);
    };
    let password = match &file.target.client_pkcs12_password_env {
        Some(name) => {
            crate::env::named(name).ok_or_else(|| TlsError::NoPassword { name: name.clone() })?
        }
        None => String::new(),
    };
    let bytes = read("client_pkcs12", path)?;
    let pem = super::pkcs12::pem_from_pkcs12(&bytes, &password)
        .map_err(|what| invalid("client_pkcs12", path, what))?;
    reqwest::Identity::from_pem(&pem).map_err(|e| {
        invalid(
            "client_pkcs12",
            path,
            format!("does not make a client identity: {e}"),
        )
    })?;
    Ok(Some(ClientIdentity { pem }))
}

/// Certificates, keys and PKCS#12 archives are read up to the bound of a CA file, like
/// `--cacert` (docs/security.md): a path to /dev/zero is an error, not a memory problem.
fn read(option: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    crate::bounds::read_capped(path, crate::bounds::CA_FILE_BYTES).map_err(|error| {
        TlsError::Unreadable {
            option,
            path: path.to_path_buf(),
            error,
        }
    })
}

fn invalid(option: &'static str, path: &Path, what: String) -> TlsError {
    TlsError::Invalid {
        option,
        path: path.to_path_buf(),
        what,
    }
}

//! `ppcert serve`'s transport flags (`--gzip`, `--require-header`, `--tls-cert`, `--tls-key`,
//! `--client-ca`) as the sandbox's [`Transport`], each unreadable file named.

use std::path::Path;

use crate::cli::ServeTransportArgs;
use crate::error::Failure;
use crate::sandbox::{TlsIdentity, Transport};

pub(crate) fn transport(args: &ServeTransportArgs) -> Result<Transport, Failure> {
    let read = |flag: &'static str, path: &Path| {
        std::fs::read(path).map_err(|error| Failure::Unreadable {
            flag,
            path: path.to_path_buf(),
            error,
        })
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(TlsIdentity {
            cert_chain_pem: read("--tls-cert", cert)?,
            key_pem: read("--tls-key", key)?,
            client_ca_pem: match &args.client_ca {
                Some(ca) => Some(read("--client-ca", ca)?),
                None => None,
            },
        }),
        _ => None,
    };
    Ok(Transport {
        gzip: args.gzip,
        required_headers: args.require_header.clone(),
        tls,
    })
}

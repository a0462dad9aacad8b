//! Why a key could not be made or read, why a bundle or package could not be read, and why an
//! attestation is not one: the path or entry at fault in each. A key problem is a usage error
//! (exit 2); a bundle that cannot be read does not verify (exit 1).

use std::path::PathBuf;

use super::dsse::PayloadError;
use super::{PREDICATE_TYPE, STATEMENT_TYPE};

/// A signing or verifying key that cannot be made, read or used. Never echoes a key's text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    #[error(
        "{}: already exists; ppcert keygen never overwrites a key (choose another --out)",
        path.display()
    )]
    Exists { path: PathBuf },
    #[error("the system's random source failed: {0}")]
    Random(String),
    /// `which` is `private` or `public`.
    #[error("cannot encode the {which} key: {error}")]
    Encode { which: &'static str, error: String },
    #[error("{}: cannot write: {error}", path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    /// `what` is `private key` or `public key`.
    #[error("{}: cannot read the {what}: {error}", path.display())]
    Read {
        path: PathBuf,
        what: &'static str,
        error: std::io::Error,
    },
    #[error(
        "{}: a public key; signing takes the private key (the file without .pub)",
        path.display()
    )]
    PublicForSigning { path: PathBuf },
    #[error(
        "{}: not an Ed25519 private key in PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, as ppcert keygen writes)",
        path.display()
    )]
    NotSigning { path: PathBuf },
    #[error(
        "{}: a private key; verifying takes the public key (KEY.pub), which is all a provider should hold",
        path.display()
    )]
    PrivateForVerifying { path: PathBuf },
    #[error(
        "{}: not an Ed25519 public key in SPKI PEM (`-----BEGIN PUBLIC KEY-----`, as ppcert keygen writes to KEY.pub)",
        path.display()
    )]
    NotVerifying { path: PathBuf },
}

/// A bundle directory or package that could not be read (as opposed to one that was read and
/// found wrong, which is a list of problems).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BundleError {
    #[error("{}: {error}", path.display())]
    Unopenable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: cannot list: {error}", dir.display())]
    Unlistable { dir: PathBuf, error: std::io::Error },
    /// `name` is the file's name in the bundle.
    #[error("{name}: cannot read: {error}")]
    Unreadable { name: String, error: std::io::Error },
    #[error("{}: not a readable .tar.gz: {error}", path.display())]
    NotTarGz { path: PathBuf, error: ArchiveError },
}

/// Why an archive stopped being read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArchiveError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("more than {mib} MiB of files: not a bundle (ppcert's bound on a package)")]
    TooLarge { mib: u64 },
    #[error("more than {bound} entries: not a bundle (ppcert's bound on a package)")]
    TooManyMembers { bound: usize },
    #[error("{0}")]
    Shape(#[from] super::shape::ShapeError),
}

/// An `attestation.intoto.json` that is not ppcert's signed statement.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AttestationError {
    #[error("not a DSSE envelope: {0}")]
    Unreadable(BundleError),
    #[error("not a DSSE envelope: {0}")]
    NotEnvelope(serde_json::Error),
    #[error("the payload is not ppcert's statement: {0}")]
    Payload(#[from] PayloadError),
    #[error("the payload is not ppcert's statement: {0}")]
    NotStatement(serde_json::Error),
    #[error(
        "a statement of type `{kind}` with predicate `{predicate}`, not `{}` with `{}`",
        STATEMENT_TYPE,
        PREDICATE_TYPE
    )]
    OtherStatement { kind: String, predicate: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Failure;
    use crate::exit_codes;

    #[test]
    fn a_key_problem_is_a_usage_error_and_an_unreadable_bundle_does_not_verify() {
        let missing = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let key = KeyError::Read {
            path: "k".into(),
            what: "private key",
            error: missing(),
        };
        assert_eq!(Failure::from(key).exit_code(), exit_codes::USAGE);
        let bundle = BundleError::Unopenable {
            path: "b.tar.gz".into(),
            error: missing(),
        };
        let failure = Failure::from(bundle);
        assert_eq!(failure.exit_code(), exit_codes::REQUIREMENT_NOT_MET);
        assert!(failure.to_string().starts_with("b.tar.gz: "), "{failure}");
    }
}

//! What a command refuses before it does anything (exit 2 through `Failure::Refused`): an
//! argument, or a path that would be overwritten, is missing or is not what the command takes.
//! Each variant names the flag or path at fault.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::bounds::PACKAGE_FILE_BYTES;
use crate::dossier::FILE_NAME as DOSSIER_FILE;

#[derive(Debug, thiserror::Error)]
pub(crate) enum Refusal {
    // Arguments.
    #[error("diff needs BASE and NEW, or --run BASE NEW --proxy BASE NEW")]
    DiffOperands,
    #[error(
        "--path-prefix {prefix:?}: expected /segment[/segment…] of letters, digits and - . _ ~"
    )]
    PathPrefix { prefix: String },
    /// `exposed` says what would be reachable.
    #[error(
        "{flag} {addr} is not a loopback address: {exposed} would be reachable from the network; pass --public to listen there anyway"
    )]
    NotLoopback {
        flag: String,
        addr: SocketAddr,
        exposed: String,
    },

    // Where output would go.
    #[error(
        "{} already holds a run; pass --resume {} to continue it, or another --out",
        dir.display(),
        dir.display()
    )]
    HoldsARun { dir: PathBuf },
    #[error(
        "--out {}: the directory is not empty, and a bundle would overwrite what is there; give a new or empty directory",
        dir.display()
    )]
    OutNotEmpty { dir: PathBuf },
    #[error("--junit {}: not a file in an existing folder; nothing was sent", path.display())]
    JunitNotAFile { path: PathBuf },
    #[error("--write-config {}: is a symbolic link; not followed, nothing sent", path.display())]
    WriteConfigLink { path: PathBuf },
    #[error(
        "--write-config {}: already exists; pass --force to replace it (nothing sent)",
        path.display()
    )]
    WriteConfigExists { path: PathBuf },
    #[error(
        "--write-config {}: {} is not a folder (nothing sent)",
        path.display(),
        dir.display()
    )]
    WriteConfigNoFolder { path: PathBuf, dir: PathBuf },
    /// `what` is `bundle` or `dossier`; `path` its attestation.
    #[error(
        "{}: the {what} is already signed; pass --force to replace its attestation",
        path.display()
    )]
    AlreadySigned { what: &'static str, path: PathBuf },
    #[error(
        "{}: already exists; ppcert package never overwrites (give another --out)",
        path.display()
    )]
    PackageExists { path: PathBuf },
    #[error(
        "{}: {size} bytes of files, more than a package may hold ({} MiB, the bound ppcert verify reads): hand over the directory instead",
        dir.display(),
        PACKAGE_FILE_BYTES >> 20
    )]
    PackageTooLarge { dir: PathBuf, size: u64 },

    // What a command reads.
    #[error("{}: not a bundle directory", dir.display())]
    NotABundleDir { dir: PathBuf },
    #[error("{}: no such bundle or package", path.display())]
    NoSuchBundleOrPackage { path: PathBuf },
    /// A bundle that verified yet whose record could not be read back: cannot happen.
    #[error("nothing to verify")]
    NothingToVerify,
    /// `first` is the first problem's message.
    #[error(
        "{name}: does not verify ({}, the first: {first}); `ppcert verify {name}` says more",
        crate::console::counted(*count, "problem", "problems")
    )]
    ExportUnverified {
        name: String,
        count: usize,
        first: String,
    },

    // Dossiers.
    #[error("{}: not a dossier (no {DOSSIER_FILE}) and not empty", dir.display())]
    NotADossier { dir: PathBuf },
    #[error("{}: no such bundle", path.display())]
    NoSuchBundle { path: PathBuf },
    #[error("{}: a dossier, not a bundle (add its bundles instead)", path.display())]
    DossierNotBundle { path: PathBuf },
    #[error("a dossier needs at least one bundle")]
    EmptyDossier,
    /// A bundle of another partner, target or environment; the words say what differs.
    #[error("{0}")]
    OtherMember(String),
    /// `missing` lists the operations, comma-separated.
    #[error(
        "dossier {}: scenario {scenario} has no flow that makes {missing}; choose a scenario that does (--scenario)",
        dir.display()
    )]
    MakesNothing {
        dir: PathBuf,
        scenario: String,
        missing: String,
    },
    /// `what` says how this run differs from the dossier's.
    #[error(
        "dossier {}: {what}; this run could not join it, so nothing was sent",
        dir.display()
    )]
    CannotJoin { dir: PathBuf, what: String },
}

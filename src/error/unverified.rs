//! What does not verify (exit 1 through `Failure::NotVerified`): a bundle, dossier or record
//! that was read and found wrong, or is not the run's. The problems themselves are told one
//! a line before; these words count them and say what was refused.

use std::path::PathBuf;

use crate::console::counted;
use crate::report::manifest::FILE_NAME as MANIFEST;

#[derive(Debug, thiserror::Error)]
pub(crate) enum Unverified {
    /// `what` says what was refused (`refusing to sign a bundle that does not verify`).
    #[error("{}: {what}", counted(*count, "problem", "problems"))]
    Problems { count: usize, what: &'static str },
    #[error(
        "{}: the bundle does not verify ({}); nothing was added",
        path.display(),
        counted(*count, "problem", "problems")
    )]
    Member { path: PathBuf, count: usize },
    #[error("the dossier holds no member")]
    NoMember,
    #[error(
        "{}: no {MANIFEST} to check the record against, refusing to re-render (a fresh manifest would vouch for whatever the files hold now)",
        dir.display()
    )]
    NoManifest { dir: PathBuf },
    /// `refused` lists what is not the run's.
    #[error(
        "{}: the record is not the run's, refusing to re-render: {}",
        dir.display(),
        refused.join("; ")
    )]
    NotTheRuns { dir: PathBuf, refused: Vec<String> },
}

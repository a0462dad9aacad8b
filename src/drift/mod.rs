//! Drift between two bundles (`ppcert diff`, `run --baseline`, `proxy --baseline`): each
//! bundle verified and reduced to a [`profile::Profile`] of sets and shapes, then compared.
//! Values are never compared, so ids, timestamps, generated data and ordering cannot show up
//! as differences; see docs/drift.md for the rules.

pub(crate) mod attribution;
mod causes;
mod compare;
mod fields;
pub(crate) mod profile;
mod shape;
pub(crate) mod text;

use std::path::Path;

use crate::attest::bundle::Source;
use crate::attest::verify::check;
pub(crate) use compare::{Compared, compare};
pub(crate) use profile::Profile;

/// Why a bundle could not be compared: it could not be read, or it does not verify.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    #[error("{0}")]
    Unreadable(String),
    #[error("{path}: does not verify, so it cannot be compared ({}); `ppcert verify {path}` says more", problems.join("; "))]
    NotVerified { path: String, problems: Vec<String> },
    /// `--baseline`: only a bundle that passed is a baseline.
    #[error(
        "{path}: its verdict is {verdict}, and only a PASSED bundle can be a baseline (a run that passes would \"regress\" against it); name the last bundle that passed"
    )]
    NotPassed { path: String, verdict: String },
}

/// Reads the bundle or package at `path`, verified first as `ppcert verify` checks it
/// (without a key: the signature, when there is one, must hold together with the files).
pub(crate) fn load(path: &Path) -> Result<Profile, LoadError> {
    let name = path.display().to_string();
    let unreadable = |why: String| LoadError::Unreadable(format!("{name}: {why}"));
    // The error of opening names the path already.
    let source = Source::open(path).map_err(|e| LoadError::Unreadable(e.to_string()))?;
    let checked = check(&source, None, true);
    if !checked.problems.is_empty() {
        return Err(LoadError::NotVerified {
            path: name,
            problems: (checked.problems.iter().take(3))
                .map(|p| p.message.clone())
                .collect(),
        });
    }
    let (Some(recorded), Some(derived)) = (&checked.recorded, &checked.derived) else {
        return Err(unreadable("no record to compare".into()));
    };
    Profile::read(&source, name.clone(), recorded, derived).map_err(|e| unreadable(e.to_string()))
}

/// Compares two bundles read from disk.
pub(crate) fn diff(base: &Path, new: &Path) -> Result<Compared, LoadError> {
    let base = load(base)?;
    let new = load(new)?;
    Ok(Compared {
        drift: compare(&base, &new),
        new: new.bundle,
    })
}

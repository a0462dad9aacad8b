//! A certification dossier: one ledger across several verified bundles (runs and proxy
//! sessions) of one partner and target, each operation counted once, each requirement naming
//! the bundles and exchanges that proved it. The members are kept inside the dossier as
//! packages, so the dossier verifies on its own.

pub(crate) mod attest;
pub(crate) mod identity;
pub(crate) mod ledger;
pub(crate) mod members;
mod model;
pub(crate) mod plan;
pub(crate) mod render;
pub(crate) mod summary;
pub(crate) mod verify;
pub(crate) mod write;

pub(crate) use model::{Dossier, FILE_NAME};

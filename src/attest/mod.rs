//! Attestations: an in-toto Statement v1 about a bundle (every file a subject, ppcert's
//! certification predicate computed again from the journal) in a DSSE envelope signed with
//! Ed25519, written to `attestation.intoto.json`; the package handed to a provider; and the
//! checks `ppcert verify` makes of all of it.

pub(crate) mod bundle;
mod crosscheck;
pub(crate) mod dsse;
mod error;
pub(crate) mod keys;
pub(crate) mod package;
mod shape;
mod statement;
mod stored;
pub(crate) mod verify;

pub(crate) use error::{ArchiveError, AttestationError, BundleError, KeyError};
pub(crate) use statement::{
    Issued, PREDICATE_TYPE, Predicate, STATEMENT_TYPE, Statement, Subject, subjects,
};

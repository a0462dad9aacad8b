//! Attestations: an in-toto Statement v1 about a bundle (every file a subject, ppcert's
//! certification predicate computed again from the journal) in a DSSE envelope signed with
//! Ed25519, written to `attestation.intoto.json`; the package handed to a provider; and the
//! checks `ppcert verify` makes of all of it.

pub mod bundle;
pub mod dsse;
mod error;
pub mod keys;
pub mod package;
mod statement;
pub mod verify;

pub use error::{ArchiveError, AttestationError, BundleError, KeyError};
pub use statement::{PREDICATE_TYPE, Predicate, STATEMENT_TYPE, Statement, Subject, subjects};

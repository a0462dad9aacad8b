//! Why an answer's body was not read whole (the HTTP client itself is built, and refused, in
//! `config/http.rs`).

/// An answer whose body was not read whole: the status came, the body did not.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    #[error("HTTP {status}: body larger than {mib} MiB, not read further")]
    TooLarge { status: u16, mib: usize },
    /// `why` is the transport's words (a timeout, a reset).
    #[error("HTTP {status} but the body was cut off: {why}")]
    CutOff { status: u16, why: String },
    /// The body came whole but could not be decoded (its bytes are never shown).
    #[error("HTTP {status} but the body could not be read: {why}")]
    Undecodable {
        status: u16,
        why: super::encoding::DecodeError,
    },
}

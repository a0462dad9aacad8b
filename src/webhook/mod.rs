//! Webhooks as the provider documents them: signature schemes, and a receiver that verifies
//! deliveries (`ppcert webhook listen`).

pub(crate) mod listen;
pub(crate) mod sample;
pub(crate) mod send;
/// The signature schemes live with the API models: the sandbox signs with them too.
pub use ppcert_models::webhook as scheme;

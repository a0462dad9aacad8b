//! Webhooks as the provider documents them: signature schemes, and a receiver that verifies
//! deliveries (`ppcert webhook listen`).

pub mod listen;
pub mod sample;
pub mod send;
/// The signature schemes live with the API models: the sandbox signs with them too.
pub use ppcert_models::webhook as scheme;

//! Webhooks as the provider documents them: signature schemes, and a receiver that verifies
//! deliveries (`ppcert webhook listen`).

pub mod listen;
pub mod scheme;

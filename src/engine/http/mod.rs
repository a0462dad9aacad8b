//! The HTTP client side of the engine: the `ApiClient` that sends every API call with the
//! spec's headers, a timeout and retries (`client.rs`), how an answer is read, bounded, decoded
//! and kept (`response.rs`, `encoding.rs`, `error.rs`), the wait a 429 or 503 announces
//! (`retry_after.rs`) and the TLS provider of the tests and benchmarks (`tls.rs`). It knows
//! nothing of flows or steps; the token it carries is `engine/token/`'s.

mod client;
mod encoding;
mod error;
mod response;
mod retry_after;
mod tls;

pub(crate) use client::{ApiClient, Attempt, Request};
pub(crate) use encoding::decode;
pub use response::MAX_KEPT_BODY;
pub(crate) use response::{MAX_READ_BODY, certificate_sha256, keep_body, tls_hint};
pub(crate) use retry_after::{announced_wait, parse_retry_after};
pub use tls::install_crypto_provider;

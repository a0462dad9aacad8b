//! The embedded staging simulator: a strict, in-memory Partner Protection API on loopback.
//!
//! Started by [`Sandbox::start`] (for `ppcert run` and tests) or by `ppcert serve`. A crate of its
//! own so that the compiler holds it apart from the client it tests: it shares only the API
//! models with ppcert. This root only names the modules and re-exports the public surface, so
//! no module imports it.

// A function over 60 lines (the workspace's clippy.toml) is split into named parts.
#![warn(clippy::too_many_lines)]

/// The API models, as the rest of the sandbox names them.
pub use ppcert_models as models;

mod dialect;
mod faults;
mod handlers;
mod idempotency;
mod jsonapi;
mod jsonpatch;
mod layout;
mod linger;
pub mod listener;
mod living;
pub mod multipart;
mod oauth;
mod operations;
mod options;
mod pooled;
mod quirks;
mod server;
mod shape;
mod shared;
mod store;
#[cfg(feature = "testing")]
pub mod testing;
mod transport;
pub mod validate;
mod webhooks;
mod wire;

pub use dialect::ApiDialect;
pub use layout::{ContractsLayout, DeltaShape, ErrorShape, Layout, QuoteWrapper};
pub use options::{
    DEFAULT_CLIENT_ID, RateLimitHeader, SandboxOptions, SubscriptionOperations, TlsIdentity,
    Transport, Wire, random_token,
};
pub use quirks::{FLIGHT_STATUS_PATH, Quirks, QuirksSeen};
pub use server::{SANDBOX_HEADER, Sandbox};
pub use store::{
    DEFAULT_MAX_BOOKINGS, DEFAULT_MAX_OPEN_QUOTES, FRAUD_WINDOW_HOURS, Held, PRODUCT_RATE,
    QUOTE_VALIDITY_HOURS,
};
pub use transport::parse_header;
pub use webhooks::{DELIVERY_TIMEOUT, DeliveryAttempt, RETRY_DELAYS, WebhookOptions};
pub use wire::{JSON_API, JSON_PATCH};

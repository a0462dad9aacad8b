//! API models of the Partner Protection API, shared by the sandbox (which parses them) and the
//! client (which sends them). Field names are spelled exactly as the spec spells them.
//!
//! The root only names the modules: the bodies live in `api.rs`, so the modules beside it
//! import that file and none imports the root.

mod api;
pub mod events;
pub mod money;
pub mod webhook;

pub use api::*;

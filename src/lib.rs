//! ppcert: the staging certification runner for the Partner Protection API.
//!
//! Data flows one way: cli → config + scenario → datagen → engine → journal → evidence →
//! report. The sandbox is the default target and shares only the API models.

#![warn(unreachable_pub)]
// A function over 60 lines (clippy.toml) is split into named parts.
#![warn(clippy::too_many_lines)]

pub(crate) mod allocator;
pub(crate) mod answer;
pub(crate) mod attest;
pub(crate) mod bounds;
pub mod cli;
pub mod command_line;
pub mod commands;
pub mod config;
pub(crate) mod console;
pub(crate) mod ctrl_c;
/// Ctrl-C from the process's first instruction (the binary's `main` calls it first).
pub use ctrl_c::listen_from_start;
pub mod datagen;
pub mod dialect;
pub mod digest;
pub(crate) mod dossier;
pub(crate) mod drift;
pub(crate) mod endpoints;
pub mod engine;
pub(crate) mod env;
pub(crate) mod environment;
pub(crate) mod error;
pub(crate) mod evidence;
pub(crate) mod exit_codes;
pub(crate) mod formats;
pub(crate) mod har;
pub(crate) mod journal;
/// The API models, shared with the sandbox crate.
pub use ppcert_models as models;
pub(crate) mod output;
pub(crate) mod probe;
pub(crate) mod problem;
pub(crate) mod proxy;
pub(crate) mod record;
pub mod report;
/// The embedded staging simulator, a crate of its own.
pub use ppcert_sandbox as sandbox;
pub mod scenario;
pub(crate) mod secret;
pub(crate) mod timestamp;
pub(crate) mod trace;
pub mod webhook;

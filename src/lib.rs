//! ppcert: the staging certification runner for the Partner Protection API.
//!
//! Data flows one way: cli → config + scenario → datagen → engine → journal → evidence →
//! report. The sandbox is the default target and shares only the API models.

pub mod attest;
pub mod bounds;
pub mod cli;
mod commands;
pub mod config;
pub mod console;
pub mod datagen;
pub mod dialect;
pub mod digest;
pub mod endpoints;
pub mod engine;
pub mod env;
pub mod environment;
pub mod error;
pub mod evidence;
pub mod exit_codes;
pub mod journal;
/// The API models, shared with the sandbox crate.
pub use ppcert_models as models;
pub mod output;
pub mod probe;
pub mod problem;
pub mod proxy;
pub mod record;
pub mod report;
/// The embedded staging simulator, a crate of its own.
pub use ppcert_sandbox as sandbox;
pub mod scenario;
pub mod secret;
pub mod webhook;

pub use error::Failure;

/// Runs one command to completion and returns the process exit code.
pub use commands::execute as run;

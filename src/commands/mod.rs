//! Command implementations: the only place that wires modules together.

pub mod attest;
pub mod bundle;
pub mod check_token;
pub mod dialects;
pub mod generate;
pub mod guard;
pub mod listening;
pub mod probe;
pub mod proxy;
pub mod proxy_command;
pub mod report;
pub mod resume;
pub mod run;
pub mod run_webhooks;
pub mod serve;
pub mod target;
pub mod validate;
pub mod webhook;

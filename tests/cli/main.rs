//! The integration test binary: every test talks to a real sandbox on an ephemeral loopback
//! port, through real HTTP or the real `ppcert` binary.

mod attest;
mod bundle;
mod captures;
mod ci;
mod common;
#[cfg(unix)]
mod container;
mod datagen;
mod dialect_hint;
mod dialects;
mod faults;
mod hostile;
mod inputs;
mod listener_stops;
mod listeners;
mod openapi;
mod outcomes;
mod package;
mod probe;
mod probe_learns;
mod proxy;
mod proxy_checks;
mod proxy_command;
mod proxy_many;
mod quote_bundles;
mod reports;
mod resume;
mod run;
mod run_faults;
mod run_safety;
mod run_webhooks;
mod sandbox_webhooks;
mod scale;
mod serve;
mod staging_model;
mod tls;
mod tokens;
mod webhook_interop;
mod webhook_send;
mod webhooks;

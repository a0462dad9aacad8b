//! The sandbox's own integration tests, one binary (`cargo test -p ppcert-sandbox`): each starts
//! a sandbox on an ephemeral loopback port and talks to it through real HTTP, with the fixtures
//! of `ppcert_sandbox::testing` and nothing of ppcert's client.

mod bounds;
mod bundles;
mod claims;
mod expiry;
mod listener;
mod living;
mod options;
mod quirks;
mod rules;
mod staging_behaviours;
mod transport;
mod webhooks;

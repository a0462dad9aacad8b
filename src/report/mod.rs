//! The evidence bundle: `evidence.json`, the reports rendered from it alone (HTML, Markdown,
//! JUnit), and `MANIFEST.sha256` over every file.

mod ctrf;
mod environment;
mod exchange_view;
mod failures;
mod files;
mod junit;
mod junit_baseline;
mod junit_listed;
mod junit_resilience;
pub(crate) mod manifest;
mod pass;
pub(crate) mod prerender;
mod pretty;
mod render;
mod timeline;
pub mod view;

pub(crate) use crate::formats::Format;
pub(crate) use environment::{md, warm};
pub(crate) use files::write_atomic;
pub(crate) use render::{append_step_summary, write_bundle, write_reports};

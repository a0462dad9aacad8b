//! The evidence bundle: `evidence.json`, the reports rendered from it alone (HTML, Markdown,
//! JUnit), and `MANIFEST.sha256` over every file.

mod failures;
mod files;
mod junit;
mod junit_listed;
pub mod manifest;
mod pass;
mod render;
mod timeline;
pub mod view;

pub use files::{Format, HTML, JUNIT, MARKDOWN, write_atomic, write_atomic_with};
pub use render::{append_step_summary, render, write_bundle, write_reports};

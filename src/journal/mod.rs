//! `journal.jsonl`: one JSON line per exchange and per step event, appended and flushed as the
//! run goes. It is the crash-safe record and the basis of `--resume`.

mod lines;
mod order;
pub mod writer;

pub use lines::{Archive, FILE_NAME, FlowSummary, Journal, Line, parse_line, read, read_numbered};

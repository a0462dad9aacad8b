//! `journal.jsonl`: one JSON line per exchange and per step event, appended and flushed as the
//! run goes. It is the crash-safe record and the basis of `--resume`.

mod lines;
mod order;
mod read;
pub(crate) mod writer;

pub(crate) use lines::{
    EXCHANGE_TAG, FAULT_PLAN_TAG, FAULT_TAG, FILE_NAME, FlowSummary, Journal, Line, STEP_TAG,
    UNRECOGNISED_TAG, WEBHOOK_TAG, kind_of, parse_line,
};
pub(crate) use read::{Archive, ReadError, each_line, read_numbered};

/// An exchange for tests elsewhere that need one whole.
#[cfg(test)]
pub(crate) use lines::tests::exchange as test_exchange;

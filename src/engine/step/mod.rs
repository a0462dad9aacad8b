//! A step's calls, as methods of the `StepContext` it works with (`context.rs`: the flow's
//! state and booking, building a call from its endpoint, concluding it), each in the file
//! named for what it does: `send.rs` sends a call once, `wait.rs` repeats a read until its
//! `[endpoints.NAME.wait]` holds, `confirm.rs` reads until a write's outcome shows
//! (`confirm_claim.rs`: a claim's built-in confirmation; `confirm_target.rs`: where it reads,
//! a 202 naming nowhere included), `reconcile.rs` settles a lost
//! answer (`resend.rs` by sending the write again, `after_loss.rs` saying what a success after
//! one proves), `read.rs` reads values from an answer and `keep.rs` keeps them in the flow's
//! `captured`. The steps themselves are plain functions over it (`engine/steps.rs`,
//! `claims.rs`, `negative.rs`).

mod after_loss;
mod confirm;
mod confirm_claim;
mod confirm_target;
mod context;
mod error;
mod keep;
mod read;
mod reconcile;
mod resend;
mod send;
mod wait;

pub(crate) use confirm_claim::{confirm_by_reading, read_claimed_status, status_check};
pub(crate) use context::StepContext;
pub(crate) use error::{StepError, missing};
pub(crate) use wait::{CONTRACTS_EVERY, CONTRACTS_WAIT, Poll};

//! Reconciliation of a lost answer by sending the very same write again. An update, a quote
//! deletion or a flight-cancellation report has no read that shows it took effect, and each is
//! idempotent in effect (an update under its `If-Match` or with quotes already used, a DELETE, a
//! report keyed by its flight): when its answer was lost and its retries ran out on answers
//! that say nothing of it (429, 5xx, none), it is sent again as it was (same idempotency key,
//! preconditions and body) until an answer that is not retryable. A success counts it once; the
//! conflict the lost attempt leaves is reconciled by `send_once`; anything else fails it. The
//! attempts number on from the earlier ones, so the record and the ledger keep one call.

use std::time::Instant;

use super::context::StepContext;
use crate::engine::caller::Pending;
use crate::models::Operation;
use crate::record::{Check, Delivery};

impl StepContext<'_> {
    /// Sends `pending`'s write again every `confirm_bounds(op).0` for at most
    /// `confirm_bounds(op).1` while its answer stays retryable; returns the last answer.
    /// Each earlier final attempt is recorded as retried before the next is sent, and each
    /// attempt is journaled before it is sent (the [`Caller`](crate::engine::caller::Caller)'s).
    pub(crate) async fn resend_until_answered(&mut self, mut pending: Pending) -> Pending {
        let op = pending.spec.operation;
        let (every, timeout) = self.shared.endpoints.confirm_bounds(op);
        let started = Instant::now();
        let mut sends = 0u32;
        while retryable(&pending) && started.elapsed() + every <= timeout {
            if !self.shared.cancel.sleep(every).await {
                return pending;
            }
            let booking = self.booking_number().map(str::to_string);
            self.caller
                .record_retried(&pending.attempt, &pending.spec, booking.as_deref());
            let next = pending.attempt.number + 1;
            let spec = pending.spec.clone();
            (pending, _) = self.caller.send_from(spec, booking.as_deref(), next).await;
            sends += 1;
        }
        if retryable(&pending) {
            pending.checks.push(Check::fail(
                "reconciliation",
                format!(
                    "answer to an earlier attempt was lost; the {op} was sent again {sends} \
                     times over {} s and no answer settled it: the staging may hold it \
                     (unconfirmed)",
                    started.elapsed().as_secs_f32()
                ),
            ));
        }
        pending
    }
}

/// A write settled only by sending it again: no read shows it took effect.
pub(super) fn settled_by_resending(op: Operation) -> bool {
    matches!(
        op,
        Operation::Update | Operation::QuoteDeletion | Operation::FlightCancellation
    )
}

/// An answer that says nothing of the write, as the client's retries judge it.
pub(super) fn retryable(pending: &Pending) -> bool {
    pending.attempt.is_retryable()
}

/// Whether an attempt of the call may have been processed without our knowing.
pub(super) fn lost(pending: &Pending, lost_before: bool) -> bool {
    lost_before || pending.attempt.delivery == Delivery::MaybeProcessed
}

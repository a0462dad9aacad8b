//! Sending a step's call, the flow's side: a write is sent once and confirmed (`confirm.rs`),
//! a read with a wait is polled (`wait.rs`); a write the interrupted run already got answered
//! is not sent again; a conflict that follows a lost answer is reconciled (`reconcile.rs`); and
//! every exchange is attributed to the flow's booking and its values kept (`keep.rs`).
//! Sending and recording is the [`Caller`]'s.

use super::context::StepContext;
use super::wait::Poll;
use super::{after_loss, resend};
use crate::engine::caller::{CallSpec, Expect, Pending};
use crate::engine::gate::GateState;
use crate::models::Operation;
use crate::record::Check;

#[cfg(doc)]
use crate::engine::caller::Caller;

impl StepContext<'_> {
    /// Sends the call. A write is sent once (again only to reconcile a lost answer) and
    /// confirmed when its answer says it is pending (`confirm.rs`); a read is repeated until
    /// the endpoint's wait holds, when it has one.
    pub(crate) async fn send(&mut self, spec: CallSpec) -> Pending {
        let wait = match spec.expect {
            Expect::Success(_) if spec.operation.is_write() => {
                let pending = self.send_once(spec).await;
                return self.confirm_write(pending).await;
            }
            Expect::Success(_) => self.shared.endpoints.wait(spec.operation).cloned(),
            Expect::Refusal(_) => None,
        };
        let Some(wait) = wait else {
            return self.send_once(spec).await;
        };
        let poll = Poll {
            condition: format!("`{}`", wait.until),
            every: wait.every,
            timeout: wait.timeout,
            fail_on_timeout: true,
        };
        self.send_polling(spec, poll, |cx, pending| {
            let context = cx.answer_context(pending);
            cx.shared.endpoints.wait_holds(&wait, &context)
        })
        .await
    }

    pub(crate) fn booking_number(&self) -> Option<&str> {
        self.state.booking.as_ref().map(|b| b.number.as_str())
    }

    /// Sends the call (see [`Caller::send`]) and returns the final attempt pending.
    /// A conflict that follows a lost answer is reconciled before it is returned.
    pub(crate) async fn send_once(&mut self, spec: CallSpec) -> Pending {
        // Resumed inside a step: a write the interrupted run already got answered and recorded
        // is not sent again (its step line was lost, not its exchange); its answer is reused.
        if let Some(done) = self.take_done(&spec) {
            return Pending::replayed(&done, spec);
        }
        // One whose answer that run lost is redone as the same call (same key): its attempts
        // number on, so a success settles the lost one rather than leaving it unconfirmed.
        let first = self.take_lost(&spec).map_or(1, |last| last + 1);
        let booking = self.booking_number().map(str::to_string);
        let (mut pending, lost_before) =
            (self.caller.send_from(spec, booking.as_deref(), first)).await;
        let mut lost_before = lost_before || first > 1;
        let acceptance = matches!(pending.spec.expect, Expect::Success(_));
        let open = self.shared.gate.state() == GateState::Open;
        if acceptance
            && open
            && resend::settled_by_resending(pending.spec.operation)
            && resend::lost(&pending, lost_before)
            && resend::retryable(&pending)
        {
            // Nothing reads it back: the write itself is sent again until it is answered.
            pending = self.resend_until_answered(pending).await;
            lost_before = true;
        }
        self.settle_after_a_loss(&mut pending, lost_before).await;
        pending.checks.extend(error_body_check(&pending));
        pending
    }

    /// Reconciles what a lost answer leaves: a conflict that is the lost attempt's trace, a
    /// subscription or claim whose retries ran out, or a success that followed it.
    async fn settle_after_a_loss(&mut self, pending: &mut Pending, lost_before: bool) {
        // An update whose lost attempt took effect changed the booking: its retry's
        // `If-Match` is then stale (412), which is that attempt's trace, as a 409 is.
        let conflict = matches!(
            (pending.spec.operation, pending.attempt.status()),
            (Operation::QuoteDeletion, Some(404)) | (Operation::Update, Some(412)) | (_, Some(409))
        );
        let acceptance = matches!(pending.spec.expect, Expect::Success(_));
        if conflict && acceptance && (lost_before || self.resumed_mid_step) {
            self.reconcile(pending).await;
        } else if acceptance
            && unsettled_after_a_loss(pending, lost_before)
            && self.shared.gate.state() == GateState::Open
        {
            // Its retries ran out on answers that say nothing of the write (429, 5xx, none)
            // after one that may have been processed: the staging may hold it, so the booking's
            // contracts are read, as after a conflict, rather than leaving it unconfirmed. Not while the
            // target has yet to answer a first call: a dead one ends the run without more.
            self.reconcile(pending).await;
        } else if lost_before && pending.status_ok() {
            let keyed = (self.shared.endpoints).sends_idempotency_key(pending.spec.operation);
            pending
                .checks
                .push(after_loss::success_check(pending, keyed));
        }
    }

    /// The interrupted step's recorded answer to this very write (same operation and URL),
    /// taken in the order the step made them. `done_in_step` holds only that step's counted
    /// exchanges (see [`ResumePoint`](crate::engine::state::ResumePoint)), and is empty otherwise.
    fn take_done(&mut self, spec: &CallSpec) -> Option<crate::record::Exchange> {
        let write = spec.operation.is_write() && matches!(spec.expect, Expect::Success(_));
        if !write {
            return None;
        }
        let url = self.shared.client.url(&spec.path);
        let i = self
            .done_in_step
            .iter()
            .position(|x| x.operation == spec.operation && x.url == url && x.counts_as_success())?;
        Some(self.done_in_step.remove(i))
    }

    /// The last attempt number of this write's call when an earlier run lost its answer and
    /// nothing settled it since. Not for a quote: each lost quote attempt may have made a
    /// quote, and the ledger counts each apart whatever follows.
    fn take_lost(&mut self, spec: &CallSpec) -> Option<u32> {
        let write = spec.operation.is_write() && matches!(spec.expect, Expect::Success(_));
        if !write || spec.operation == Operation::Quote {
            return None;
        }
        let i = (self.lost_in_step.iter()).position(|(op, _)| *op == spec.operation)?;
        Some(self.lost_in_step.remove(i).1)
    }

    /// Records the final attempt with the step's checks; true when the exchange passed.
    pub(crate) fn finish(&mut self, mut pending: Pending) -> bool {
        self.keep_captured(&mut pending);
        self.caller.finish(pending, self.booking_number())
    }
}

/// A subscription or a claim that ended without its success after an attempt whose answer
/// was lost: reading the booking's contracts settles whether it took effect.
fn unsettled_after_a_loss(pending: &Pending, lost_before: bool) -> bool {
    let lost = resend::lost(pending, lost_before);
    let readable = matches!(
        pending.spec.operation,
        Operation::Subscription | Operation::Claim
    );
    readable && lost && !pending.status_ok()
}

/// A success status whose body states an error (some gateways answer 200 with an error
/// object): the server did not do what was asked, whatever the status says.
fn error_body_check(pending: &Pending) -> Option<Check> {
    let response = pending.attempt.response.as_ref()?;
    let success = matches!(pending.spec.expect, Expect::Success(_))
        && pending.spec.expect.matches(response.status);
    let words = success.then(|| response.error_words()).flatten()?;
    Some(Check::fail(
        "error_body",
        format!(
            "HTTP {} but the body states an error: {words}",
            response.status
        ),
    ))
}

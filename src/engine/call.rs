//! The flow's side of a step's call: a conflict that follows a lost answer is reconciled by
//! reading the booking's contracts (the flow's state says what to look for), and every
//! exchange is attributed to the flow's booking. Sending and recording is the [`Caller`]'s.

use serde_json::Value;

use super::caller::{CallSpec, Expect, Pending};
use super::step_context::StepContext;
use super::tolerant;
use crate::models::{Operation, ProductType};
use crate::record::{Check, Delivery};

#[cfg(doc)]
use super::caller::Caller;

impl StepContext<'_> {
    pub(super) fn booking_number(&self) -> Option<&str> {
        self.state.booking.as_ref().map(|b| b.number.as_str())
    }

    /// Sends the call (see [`Caller::send`]) and returns the final attempt pending.
    /// A conflict that follows a lost answer is reconciled before it is returned.
    pub(super) async fn send_once(&mut self, spec: CallSpec) -> Pending {
        // Resumed inside a step: a write the interrupted run already got answered and recorded
        // is not sent again (its step line was lost, not its exchange); its answer is reused.
        if let Some(done) = self.take_done(&spec) {
            return Pending::replayed(&done, spec);
        }
        let (mut pending, lost_before) = self.caller.send(spec, self.booking_number()).await;
        // An update whose lost attempt took effect changed the booking: its retry's
        // `If-Match` is then stale (412), which is that attempt's trace, as a 409 is.
        let conflict = matches!(
            (pending.spec.operation, pending.attempt.status()),
            (Operation::QuoteDeletion, Some(404)) | (Operation::Update, Some(412)) | (_, Some(409))
        );
        if conflict
            && matches!(pending.spec.expect, Expect::Success(_))
            && (lost_before || self.resumed_mid_step)
        {
            self.reconcile(&mut pending).await;
        } else if lost_before
            && pending.status_ok()
            && self
                .shared
                .endpoints
                .sends_idempotency_key(pending.spec.operation)
        {
            // The retry carried the lost attempt's key: a staging that honours keys answers it
            // as that attempt, so the write took effect once.
            pending.checks.push(Check::pass(
                "reconciled",
                "answer to an earlier attempt was lost; retried with the same idempotency key, \
                 which the staging answers as that attempt; counted once",
            ));
        }
        pending.checks.extend(error_body_check(&pending));
        pending
    }

    /// The interrupted step's recorded answer to this very write (same operation and URL),
    /// taken in the order the step made them. `done_in_step` holds only that step's counted
    /// exchanges (see [`ResumePoint`](super::state::ResumePoint)), and is empty otherwise.
    fn take_done(&mut self, spec: &CallSpec) -> Option<crate::record::Exchange> {
        let write = spec.operation.is_write() && matches!(spec.expect, Expect::Success(_));
        if !write {
            return None;
        }
        let url = self.shared.client.url(&spec.path);
        let i = self
            .done_in_step
            .iter()
            .position(|x| x.operation == spec.operation && x.url == url)?;
        Some(self.done_in_step.remove(i))
    }

    /// A conflict after an answer was lost: was it our own earlier attempt that succeeded?
    async fn reconcile(&mut self, pending: &mut Pending) {
        let confirmed = match pending.spec.operation {
            Operation::Subscription => self.reconcile_by_reading(&pending.spec.step, None).await,
            Operation::Claim => {
                let claimed = self.state.claimed.clone();
                self.reconcile_by_reading(&pending.spec.step, claimed).await
            }
            // The quote is used, the flight reported, the quote gone: by this flow's own lost request.
            Operation::Update | Operation::FlightCancellation | Operation::QuoteDeletion => {
                Some("the conflict shows the lost attempt took effect".to_string())
            }
            _ => None,
        };
        if let Some(detail) = confirmed {
            pending.attempt.delivery = Delivery::Reconciled;
            pending.checks.push(Check::pass(
                "reconciled",
                format!("answer to an earlier attempt was lost; {detail}; counted once"),
            ));
        }
    }

    /// Reads the booking's contracts: the subscription exists, or the claimed contract shows a claim.
    async fn reconcile_by_reading(
        &mut self,
        step: &str,
        claimed: Option<(ProductType, String)>,
    ) -> Option<String> {
        let context = self.read_context();
        let expect = self.success(Operation::ReadContracts);
        let step = format!("{step}:reconcile");
        let spec = self
            .spec(Operation::ReadContracts, &step, &context, None, expect)
            .ok()?;
        // A lagging staging lists a write only a while after it took effect: the reads go on
        // for as long as the write's confirmation would wait, not once.
        let op = pending_operation(&claimed);
        let (every, timeout) = self.shared.endpoints.confirm_bounds(op);
        let started = std::time::Instant::now();
        let mut reads = 0u32;
        loop {
            let (mut read, _) = self.caller.send(spec.clone(), self.booking_number()).await;
            reads += 1;
            let result = self.shows_earlier_attempt(&mut read, &claimed);
            let waited = started.elapsed() + every > timeout;
            if result.is_some() || waited || self.shared.cancel.is_cancelled() {
                let detail = match &result {
                    Some(found) => found.clone(),
                    None => format!(
                        "nothing confirms the earlier attempt ({reads} reads over {} s)",
                        started.elapsed().as_secs_f32()
                    ),
                };
                read.checks
                    .push(Check::new("reconciliation", result.is_some(), detail));
                self.finish(read);
                return result;
            }
            read.poll = true;
            let detail = format!("read {reads}: the earlier attempt does not show yet");
            read.checks.push(Check::pass("reconciliation", detail));
            self.finish(read);
            if !self.shared.cancel.sleep(every).await {
                return None;
            }
        }
    }

    /// Whether a contracts read shows the lost attempt: the subscription's contracts exist, or
    /// the claimed contract shows a claim.
    fn shows_earlier_attempt(
        &mut self,
        read: &mut Pending,
        claimed: &Option<(ProductType, String)>,
    ) -> Option<String> {
        let payload = read.payload().unwrap_or(Value::Null);
        match claimed {
            None => {
                let product_type = self
                    .state
                    .booking
                    .as_ref()
                    .and_then(|b| b.product_types.first().copied())
                    .unwrap_or(ProductType::Withdrawal);
                (!tolerant::contracts(&payload, product_type.as_str())
                    .0
                    .is_empty())
                .then(|| "the booking's contracts exist".to_string())
            }
            Some((product_type, id)) => {
                let status =
                    super::reading::claimed_contract_status(&payload, product_type.as_str(), id)
                        .and_then(|(status, _)| status.as_str().map(str::to_string));
                status.map(|status| {
                    self.state.claim_status = Some(status.clone().into());
                    format!("the contract shows a claim in status {status}")
                })
            }
        }
    }

    /// Records the final attempt with the step's checks; true when the exchange passed.
    pub(super) fn finish(&mut self, mut pending: Pending) -> bool {
        self.keep_captured(&mut pending);
        self.caller.finish(pending, self.booking_number())
    }
}

/// The write a reconciliation looks for: a claim when a contract was claimed, else the
/// subscription.
fn pending_operation(claimed: &Option<(ProductType, String)>) -> Operation {
    match claimed {
        Some(_) => Operation::Claim,
        None => Operation::Subscription,
    }
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

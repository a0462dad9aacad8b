//! Reconciliation of a lost answer: a conflict (409, or 404/412 where that is the trace)
//! that follows a lost answer is settled by what it proves, or by reading the booking's
//! contracts for as long as the write's confirmation would wait, so the write counts once.

use serde_json::Value;

use super::context::StepContext;
use crate::answer::reading::claimed_contract_status;
use crate::answer::tolerant;
use crate::engine::caller::Pending;
use crate::models::{Operation, ProductType};
use crate::record::{Check, Delivery};

impl StepContext<'_> {
    /// A conflict after an answer was lost: was it our own earlier attempt that succeeded?
    pub(crate) async fn reconcile(&mut self, pending: &mut Pending) {
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
                let status = claimed_contract_status(&payload, product_type.as_str(), id)
                    .and_then(|(status, _)| status.as_str().map(str::to_string));
                status.map(|status| {
                    self.state.claim_status = Some(status.clone().into());
                    format!("the contract shows a claim in status {status}")
                })
            }
        }
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

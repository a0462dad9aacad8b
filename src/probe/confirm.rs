//! The probe confirms its claim as `run` does: the status its answer carried, else the
//! contracts read after it, repeated a bounded time; a flagged or unread claim is left for
//! the user, never called ready.

use std::time::Instant;

use super::prober::Prober;
use super::stop::Stop;
use crate::answer::claim_flag::flagged_reason;
use crate::datagen::Booking;
use crate::environment::Environment;
use crate::models::{ClaimStatus, Operation};

impl Prober {
    /// Reads the contracts after the claim (`claimed`: `None` when no claim was accepted,
    /// else the status its answer carried) until the claim's status is known.
    pub(super) async fn confirm_claim(
        &mut self,
        booking: &Booking,
        claimed: Option<Option<String>>,
    ) -> Result<(), Stop> {
        let label = "read contracts (after the claim)";
        let Some(mut status) = claimed else {
            self.read_contracts(booking, label).await?;
            return Ok(());
        };
        // The bounds of `[endpoints.claim.confirm]`, as `run` reads them.
        let (every, timeout) = self.endpoints.confirm_bounds(Operation::Claim);
        let deadline = Instant::now() + timeout;
        loop {
            let (_, read) = self.read_contracts(booking, label).await?;
            status = status.or(read);
            if status.is_some() || Instant::now() >= deadline {
                break;
            }
            if !self.cancel.sleep(every).await {
                break;
            }
        }
        match status.map(ClaimStatus::from) {
            Some(ClaimStatus::ManualVerificationNeeded) => self.left.push(format!(
                "claim: {}",
                flagged_reason(None, Environment::Staging)
            )),
            Some(_) => {}
            None => self.left.push(format!(
                "claim status unconfirmed: neither the claim's answer nor the contracts read \
                 over {} s showed it; set `[endpoints.claim.capture] claim_status` or \
                 `[endpoints.read_contracts.capture] claim_status`",
                timeout.as_secs_f32()
            )),
        }
        Ok(())
    }
}

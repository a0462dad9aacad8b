//! What the probe makes of the run's verdict on its claim (`engine/single_call.rs` settles
//! the claim through the run's own claim confirmation): a flagged claim or a failed read is
//! left for the user; an unconfirmed one sends the probe looking for the status among the
//! contracts' candidates, and a status it proves there becomes the capture `run` will read.

use super::prober::Prober;
use super::stop::Stop;
use crate::datagen::Booking;
use crate::engine::single_call::ClaimOutcome;
use crate::models::Operation;

impl Prober {
    /// Leaves for the user what the run's claim confirmation could not settle.
    pub(super) async fn after_claim(
        &mut self,
        booking: &Booking,
        outcome: ClaimOutcome,
    ) -> Result<(), Stop> {
        match outcome {
            ClaimOutcome::Status(_) => {}
            ClaimOutcome::Failed(why) => self.left.push(format!("claim: {why}")),
            ClaimOutcome::Unconfirmed(why) => {
                let key = (Operation::ReadContracts, "claim_status".to_string());
                let known = self.proven.contains_key(&key);
                let label = "read contracts (after the claim)";
                self.read_contracts(booking, label, false).await?;
                // Only a capture proven now settles it: the run's reading already had its time.
                if known || !self.proven.contains_key(&key) {
                    self.left.push(why);
                }
            }
        }
        Ok(())
    }
}

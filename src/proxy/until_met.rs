//! `--until-met` on the evidence's ledger: once every requirement has its successes, the
//! claims whose status the partner's traffic never showed are read, and only a ledger met with
//! them confirmed ends the session. A claim accepted but flagged for manual verification, or
//! whose status cannot be read, does not count, so the session goes on rather than saying
//! "every requirement is met" over a ledger whose claims are 0/5.

use super::Proxy;

impl Proxy {
    /// Resolves once every requirement is met as the verdict will count it.
    pub(crate) async fn met_on_the_ledger(&self) {
        loop {
            self.met.notified().await;
            if !self.all_met() {
                self.confirm_claims().await;
            }
            if self.all_met() {
                return;
            }
            crate::console::tell!(
                "every operation has its successes, but not every claim is confirmed (its status unread or flagged for manual verification): going on"
            );
        }
    }
}

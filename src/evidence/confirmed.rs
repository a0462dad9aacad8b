//! Which accepted claims count: a claim is met only once its status was read (from its own
//! answer or a later contracts read of the same booking) and the provider did not flag it
//! `MANUAL_VERIFICATION_NEEDED`. Counted from the exchanges alone, so `verify` agrees.

use std::collections::HashMap;

use crate::models::{ClaimStatus, Operation};
use crate::record::Exchange;

/// What became of the claims the provider accepted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClaimTally {
    /// Status read and not flagged: these meet the requirement.
    pub confirmed: u32,
    /// Status read as `MANUAL_VERIFICATION_NEEDED`.
    pub flagged: u32,
    /// No status was ever read: never counted as met.
    pub unread: u32,
}

/// The accepted claims of a run, each with the last status read for it.
#[derive(Default)]
pub(crate) struct ClaimConfirmations {
    statuses: Vec<Option<ClaimStatus>>,
    /// The `seq` of each accepted claim, beside its status (a dossier names the ones counted).
    seqs: Vec<u64>,
    /// The latest claim of each (flow, booking): a later read of that booking's contracts
    /// tells its status.
    latest: HashMap<(String, Option<String>), usize>,
}

impl ClaimConfirmations {
    /// Takes in one exchange in recorded order: `accepted` says the provider counted it.
    pub(crate) fn add(&mut self, exchange: &Exchange, accepted: bool) {
        let status = status_read(exchange);
        let key = (exchange.flow.clone(), exchange.booking_number.clone());
        match exchange.operation {
            Operation::Claim if accepted => {
                self.latest.insert(key, self.statuses.len());
                self.statuses.push(status);
                self.seqs.push(exchange.seq);
            }
            // A contracts read, or any read confirming the claim (a `202`'s operation).
            _ if status.is_some()
                && (exchange.operation == Operation::ReadContracts
                    || exchange.phase == crate::record::Phase::Confirm) =>
            {
                if let Some(index) = self.latest.get(&key) {
                    self.statuses[*index] = status;
                }
            }
            _ => {}
        }
    }

    /// The `seq` of each claim that counts: its status read and not flagged.
    pub(crate) fn confirmed(&self) -> impl Iterator<Item = u64> + '_ {
        (self.statuses.iter().zip(&self.seqs))
            .filter(|(status, _)| {
                status
                    .as_ref()
                    .is_some_and(|s| *s != ClaimStatus::ManualVerificationNeeded)
            })
            .map(|(_, seq)| *seq)
    }

    pub(crate) fn tally(&self) -> ClaimTally {
        let mut tally = ClaimTally::default();
        for status in &self.statuses {
            match status {
                Some(ClaimStatus::ManualVerificationNeeded) => tally.flagged += 1,
                Some(_) => tally.confirmed += 1,
                None => tally.unread += 1,
            }
        }
        tally
    }
}

/// The claim status an exchange read, if it read one.
fn status_read(exchange: &Exchange) -> Option<ClaimStatus> {
    exchange
        .reads
        .iter()
        .rev()
        .filter(|read| read.name == "claim_status")
        .find_map(|read| read.value.clone())
        .filter(|value| !blank(value))
        .map(ClaimStatus::from)
}

/// A status read as nothing: empty, spaces, or an empty JSON string as the engine records a
/// read that was not text (`""`). Such a claim is not confirmed, in a run or a dossier.
fn blank(value: &str) -> bool {
    let value = value.trim();
    value.is_empty() || value.trim_matches('"').trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::blank;

    #[test]
    fn a_blank_status_confirms_nothing() {
        for value in ["", "  ", "\"\"", " \" \" "] {
            assert!(blank(value), "{value:?}");
        }
        assert!(!blank("ACCEPTED"));
    }
}

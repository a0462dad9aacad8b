//! Writes whose outcome was read after their answer (a `202 Accepted`, or an endpoint with a
//! `confirm` table): each counts only once a confirmation read settled it. Counted from the
//! exchanges alone, in recorded order, so `verify` and `--resume` agree with the run.

use std::collections::HashMap;

use crate::models::Operation;
use crate::record::phase::{CONFIRMED, UNCONFIRMED};
use crate::record::{Exchange, Phase};

/// How a pending write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settled {
    Succeeded,
    Failed,
    Unconfirmed,
}

/// The writes answered and not yet settled, by (flow, step): the confirmation reads of a
/// write are recorded under its flow and step.
#[derive(Default)]
pub(crate) struct PendingWrites {
    open: HashMap<(String, String), Vec<Operation>>,
}

impl PendingWrites {
    /// Takes in one exchange; `success` says the provider accepted it. Returns the counts it
    /// settles: a pending write's own exchange is held (`None`), a settling confirmation read
    /// gives its write's operation and how it ended.
    pub(crate) fn add(
        &mut self,
        exchange: &Exchange,
        success: bool,
    ) -> Option<(Operation, Settled)> {
        let key = || (exchange.flow.clone(), exchange.step.clone());
        match exchange.phase {
            Phase::Pending if success && exchange.operation != Operation::Claim => {
                self.open.entry(key()).or_default().push(exchange.operation);
                None
            }
            Phase::Confirm if !exchange.poll => {
                let writes = self.open.get_mut(&key())?;
                let operation = writes.remove(0);
                if writes.is_empty() {
                    self.open.remove(&key());
                }
                Some((operation, settled(exchange)))
            }
            _ => None,
        }
    }

    /// Whether the exchange is a pending write held here rather than counted at once.
    pub(crate) fn holds(exchange: &Exchange) -> bool {
        exchange.phase == Phase::Pending && exchange.operation != Operation::Claim
    }

    /// The writes never settled (an interrupted run): each is unconfirmed.
    pub(crate) fn unsettled(self) -> impl Iterator<Item = Operation> {
        self.open.into_values().flatten()
    }
}

/// What a settling confirmation read says of its write.
fn settled(exchange: &Exchange) -> Settled {
    let failed =
        |name: &str| (exchange.checks.iter()).any(|c| c.name == name && !c.passed && !c.warning);
    if failed(UNCONFIRMED) {
        Settled::Unconfirmed
    } else if failed(CONFIRMED) {
        Settled::Failed
    } else {
        Settled::Succeeded
    }
}

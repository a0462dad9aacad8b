//! The operations an asynchronous staging started (`subscription_operations`): each with the
//! request it will carry out, when it began, and its outcome once decided. State only: the
//! handlers that answer for them are `operations.rs`'.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use serde_json::Value;

use crate::models::SubscriptionRequest;
use crate::options::SubscriptionOperations;

/// One operation: the request it will carry out, when it began, and its outcome once decided.
pub(crate) struct Record {
    pub(crate) request: Option<SubscriptionRequest>,
    pub(crate) began: Instant,
    pub(crate) fails: bool,
    pub(crate) outcome: Option<Result<Value, Value>>,
}

/// Operations remembered at most (the newest): a long-lived `serve` must stay flat. An older
/// one is forgotten, decided or not: `GET /operations/{id}` then answers 404.
pub(crate) const MAX_OPERATIONS: u64 = 10_000;

/// The operations started so far, the newest [`MAX_OPERATIONS`] of them.
#[derive(Default)]
pub(crate) struct Operations {
    started: Mutex<(u64, HashMap<String, Record>)>,
}

impl Operations {
    /// Starts an operation for a checked request; its id.
    pub(crate) fn start(
        &self,
        request: SubscriptionRequest,
        settings: SubscriptionOperations,
    ) -> String {
        let mut started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        started.0 += 1;
        let nth = started.0;
        let id = format!("op_{nth:06}");
        let fails = settings
            .fail_every
            .is_some_and(|every| every > 0 && nth.is_multiple_of(every));
        let record = Record {
            request: Some(request),
            began: Instant::now(),
            fails,
            outcome: None,
        };
        started.1.insert(id.clone(), record);
        forget_oldest(&mut started.1, nth, MAX_OPERATIONS);
        id
    }

    /// The operations by id, and how many were started.
    pub(crate) fn lock(&self) -> MutexGuard<'_, (u64, HashMap<String, Record>)> {
        self.started.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Ids are given in order (`op_000001`, …), so the one `cap` before the `nth` is the oldest
/// still held: forgetting it as each is started keeps `cap` at most.
fn forget_oldest(started: &mut HashMap<String, Record>, nth: u64, cap: u64) {
    if let Some(oldest) = nth.checked_sub(cap).filter(|n| *n > 0) {
        started.remove(&format!("op_{oldest:06}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_newest_operations_are_kept() {
        let mut started = HashMap::new();
        for nth in 1..=5u64 {
            let record = Record {
                request: None,
                began: Instant::now(),
                fails: false,
                outcome: None,
            };
            started.insert(format!("op_{nth:06}"), record);
            forget_oldest(&mut started, nth, 3);
        }
        let mut kept: Vec<&String> = started.keys().collect();
        kept.sort();
        assert_eq!(kept, ["op_000003", "op_000004", "op_000005"]);
    }
}

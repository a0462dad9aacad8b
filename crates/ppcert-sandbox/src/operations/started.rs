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

/// The operations started so far.
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
        id
    }

    /// The operations by id, and how many were started.
    pub(crate) fn lock(&self) -> MutexGuard<'_, (u64, HashMap<String, Record>)> {
        self.started.lock().unwrap_or_else(|e| e.into_inner())
    }
}

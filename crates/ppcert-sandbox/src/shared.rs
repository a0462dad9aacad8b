//! The state the sandbox's handlers and middleware share: the store, the options, the clock
//! offset, the request counters, the webhook sender, the idempotency keys and issued tokens.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};

use crate::idempotency::keys::Keys;
use crate::oauth::issued::Issued;
use crate::options::SandboxOptions;
use crate::quirks::seen::Counters;
use crate::store;
use crate::webhooks;

/// State shared by the sandbox's handlers.
pub(crate) struct Shared {
    pub(crate) store: Mutex<store::Store>,
    pub(crate) options: SandboxOptions,
    pub(crate) clock_offset: Mutex<chrono::Duration>,
    pub(crate) requests: AtomicU64,
    pub(crate) posts: AtomicU64,
    pub(crate) webhooks: Option<Arc<webhooks::Sender>>,
    pub(crate) keys: Keys,
    pub(crate) issued: Issued,
    pub(crate) quirks_seen: Counters,
    /// Asynchronous subscriptions' operations (`subscription_operations`).
    pub(crate) operations: crate::operations::started::Operations,
}

impl Shared {
    pub(crate) fn store(&self) -> MutexGuard<'_, store::Store> {
        // A panicking handler cannot leave the store half-written (every mutation happens after
        // all checks), so a poisoned lock is still safe to use.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies a change to the store, then hands the webhook events it caused to the sender,
    /// outside the lock and without waiting for their delivery.
    pub(crate) fn change<T>(&self, apply: impl FnOnce(&mut store::Store) -> T) -> T {
        let (result, events) = {
            let mut store = self.store();
            let result = apply(&mut store);
            (result, store.take_events())
        };
        if let Some(sender) = &self.webhooks
            && !events.is_empty()
        {
            sender.dispatch(events);
        }
        result
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        Utc::now() + *self.clock_offset.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn rules(&self) -> store::Rules {
        store::Rules {
            production: self.options.production,
            claim_step: chrono::Duration::from_std(self.options.claim_step)
                .unwrap_or(chrono::Duration::MAX),
            claims_decided_after: (self.options.claims_decided_after)
                .map(|after| chrono::Duration::from_std(after).unwrap_or(chrono::Duration::MAX)),
        }
    }
}

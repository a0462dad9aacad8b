//! Cooperative cancellation (Ctrl-C): stop launching work, let in-flight requests end.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

#[derive(Clone, Default)]
pub(crate) struct Cancel {
    inner: Arc<(AtomicBool, Notify)>,
}

impl Cancel {
    pub(crate) fn cancel(&self) {
        self.inner.0.store(true, Ordering::SeqCst);
        self.inner.1.notify_waiters();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.inner.0.load(Ordering::SeqCst)
    }

    /// Sleeps for `duration`; returns false if cancelled first.
    pub(crate) async fn sleep(&self, duration: Duration) -> bool {
        if self.is_cancelled() {
            return false;
        }
        let notified = self.inner.1.notified();
        tokio::select! {
            _ = tokio::time::sleep(duration) => !self.is_cancelled(),
            _ = notified => false,
        }
    }
}

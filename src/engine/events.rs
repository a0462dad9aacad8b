//! The run's one event stream: the engine (and the proxy) say once what happened; the journal,
//! the progress display and the evidence collector each subscribe to it.

use std::sync::{Arc, Mutex};

use crate::models::Operation;
use crate::record::{Exchange, StepEvent, StepStatus};
use crate::timestamp::Timestamp;

/// What happened, in the order it happened.
#[derive(Debug)]
pub(crate) enum RunEvent {
    /// An attempt of a call is about to be sent: the first, or a retry.
    Sending {
        flow: String,
        step: String,
        operation: Operation,
        method: String,
        url: String,
        at: Timestamp,
        /// 1 for the call's first attempt; its retries count on.
        attempt: u32,
    },
    /// A step began: if the run dies before its end, resume knows it may have taken effect.
    StepStarted { flow: String, step_index: usize },
    /// One HTTP attempt ended; the stream numbers it (`seq`).
    ExchangeFinished(Box<Exchange>),
    /// A step ended, with the flow's state after it when it passed.
    StepFinished(StepEvent),
    /// A flow ended after `steps` steps.
    FlowFinished {
        label: String,
        status: StepStatus,
        steps: usize,
        reason: Option<String>,
    },
}

/// Hears every event of the stream, in order.
pub(crate) trait Subscriber: Send + Sync {
    fn on(&self, event: &RunEvent);
}

pub(crate) struct EventStream {
    /// Held while an event is numbered and handed round, so every subscriber hears the events
    /// in one order and exchanges in `seq` order (the evidence merges the journal by it).
    next_seq: Mutex<u64>,
    subscribers: Vec<Arc<dyn Subscriber>>,
}

impl EventStream {
    /// `next_seq` continues the numbering of a resumed run's earlier exchanges.
    pub(crate) fn new(next_seq: u64, subscribers: Vec<Arc<dyn Subscriber>>) -> EventStream {
        EventStream {
            next_seq: Mutex::new(next_seq),
            subscribers,
        }
    }

    pub(crate) fn emit(&self, mut event: RunEvent) {
        let mut next_seq = self.next_seq.lock().unwrap_or_else(|e| e.into_inner());
        if let RunEvent::ExchangeFinished(exchange) = &mut event {
            exchange.seq = *next_seq;
            *next_seq += 1;
        }
        for subscriber in &self.subscribers {
            subscriber.on(&event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Heard(Mutex<Vec<String>>);

    impl Subscriber for Heard {
        fn on(&self, event: &RunEvent) {
            let said = match event {
                RunEvent::ExchangeFinished(x) => format!("exchange {}", x.seq),
                RunEvent::StepStarted { step_index, .. } => format!("step {step_index}"),
                other => format!("{other:?}"),
            };
            self.0.lock().unwrap().push(said);
        }
    }

    #[test]
    fn every_subscriber_hears_every_event_in_order_with_exchanges_numbered() {
        let first = Arc::new(Heard(Mutex::new(Vec::new())));
        let second = Arc::new(Heard(Mutex::new(Vec::new())));
        let stream = EventStream::new(7, vec![first.clone(), second.clone()]);
        let exchange: Exchange = serde_json::from_value(serde_json::json!({
            "seq": 0, "flow": "f#1", "step": "quote", "operation": "quote",
            "booking_number": null, "attempt": 1, "method": "POST", "url": "u",
            "started_at": "2027-01-01T00:00:00Z", "duration_ms": 1, "request": {"headers": {}, "body": null},
            "response": null, "outcome": "error", "checks": [], "error": "refused",
        }))
        .unwrap();
        stream.emit(RunEvent::ExchangeFinished(Box::new(exchange.clone())));
        stream.emit(RunEvent::StepStarted {
            flow: "f#1".into(),
            step_index: 2,
        });
        stream.emit(RunEvent::ExchangeFinished(Box::new(exchange)));
        let heard = vec!["exchange 7", "step 2", "exchange 8"];
        assert_eq!(*first.0.lock().unwrap(), heard);
        assert_eq!(*second.0.lock().unwrap(), heard);
    }
}

//! Webhook deliveries from the sandbox: each event the store schedules is signed with the
//! configured scheme and POSTed to the partner's URL in the background, so no API answer waits
//! for it. A non-2xx answer or a failure (10 s timeout) is retried after 1, 2, 4, 8 and 16 s
//! (six attempts over about 31 s); every attempt is logged on stderr when asked (never the
//! secret) and kept for [`crate::Sandbox::webhook_deliveries`].

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::models::events::Event;
use crate::models::webhook::{Scheme, sign};
use crate::store::Scheduled;

/// The documented retry schedule: the wait before each retry.
pub const RETRY_DELAYS: [Duration; 5] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(16),
];

/// How long one delivery attempt may take.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and how the sandbox delivers webhooks.
#[derive(Clone)]
pub struct WebhookOptions {
    pub url: String,
    pub scheme: Scheme,
    pub secret: Vec<u8>,
    pub timeout: Duration,
    /// The wait before each retry; its length bounds the attempts.
    pub retry_delays: Vec<Duration>,
    /// Print one line per attempt on stderr (`ppcert serve`).
    pub log: bool,
}

impl WebhookOptions {
    pub fn new(url: impl Into<String>, scheme: Scheme, secret: Vec<u8>) -> WebhookOptions {
        WebhookOptions {
            url: url.into(),
            scheme,
            secret,
            timeout: DELIVERY_TIMEOUT,
            retry_delays: RETRY_DELAYS.to_vec(),
            log: false,
        }
    }
}

impl std::fmt::Debug for WebhookOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookOptions")
            .field("url", &self.url)
            .field("scheme", &self.scheme)
            .field("secret", &"<redacted>")
            .field("timeout", &self.timeout)
            .field("retry_delays", &self.retry_delays)
            .finish()
    }
}

/// One delivery attempt, as tests and the log see it.
#[derive(Debug, Clone, Serialize)]
pub struct DeliveryAttempt {
    pub delivery_id: String,
    pub event: String,
    pub booking_number: String,
    pub claim_status: Option<String>,
    /// 1 for the first try.
    pub attempt: u32,
    /// The receiver's status code, if it answered.
    pub status: Option<u16>,
    /// Why the attempt failed without an answer (timeout, refused connection).
    pub error: Option<String>,
    pub at: DateTime<Utc>,
}

impl DeliveryAttempt {
    pub fn delivered(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// Delivery attempts remembered at most (the newest): a long-lived `serve` must stay flat.
const MAX_KEPT_ATTEMPTS: usize = 10_000;

/// Deliveries scheduled and not yet ended, at most: past it a new event is recorded as not
/// delivered, so a receiver that never answers cannot make a long-lived `serve` grow.
const MAX_IN_FLIGHT: usize = 10_000;

pub(crate) struct Sender {
    options: WebhookOptions,
    /// Deliveries scheduled and not yet ended, and how many may be ([`MAX_IN_FLIGHT`]).
    in_flight: AtomicUsize,
    max_in_flight: usize,
    client: reqwest::Client,
    attempts: Mutex<std::collections::VecDeque<DeliveryAttempt>>,
    next_id: AtomicU64,
    /// Deliveries that are due and not yet delivered or given up on.
    due: AtomicUsize,
}

impl Sender {
    pub(crate) fn new(options: WebhookOptions) -> std::io::Result<Sender> {
        // An https receiver needs a TLS provider; ring, as the rest of ppcert uses.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(options.timeout)
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Sender {
            options,
            in_flight: AtomicUsize::new(0),
            max_in_flight: MAX_IN_FLIGHT,
            client,
            attempts: Mutex::new(std::collections::VecDeque::new()),
            next_id: AtomicU64::new(0),
            due: AtomicUsize::new(0),
        })
    }

    pub(crate) fn attempts(&self) -> Vec<DeliveryAttempt> {
        self.attempts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Deliveries due now and not yet ended.
    pub(crate) fn due(&self) -> usize {
        self.due.load(Ordering::SeqCst)
    }

    /// Delivers each event when it is due, in the background.
    pub(crate) fn dispatch(self: &Arc<Self>, events: Vec<Scheduled>) {
        for scheduled in events {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
            if self.in_flight.fetch_add(1, Ordering::SeqCst) >= self.max_in_flight {
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                self.record(DeliveryAttempt {
                    delivery_id: format!("evt_{id:08}"),
                    event: scheduled.event.name().to_string(),
                    booking_number: scheduled.event.booking_number().to_string(),
                    claim_status: scheduled.event.claim_status().map(str::to_string),
                    attempt: 0,
                    status: None,
                    error: Some(format!(
                        "not delivered: {} deliveries already pending",
                        self.max_in_flight
                    )),
                    at: Utc::now(),
                });
                continue;
            }
            let sender = Arc::clone(self);
            // Due at once: counted before the request that caused it is answered, so a stop
            // that settles the deliveries due cannot miss it.
            let wait = scheduled.after.to_std().ok().filter(|wait| !wait.is_zero());
            if wait.is_none() {
                self.due.fetch_add(1, Ordering::SeqCst);
            }
            tokio::spawn(async move {
                if let Some(wait) = wait {
                    tokio::time::sleep(wait).await;
                    sender.due.fetch_add(1, Ordering::SeqCst);
                }
                sender
                    .deliver(format!("evt_{id:08}"), &scheduled.event)
                    .await;
                sender.due.fetch_sub(1, Ordering::SeqCst);
                sender.in_flight.fetch_sub(1, Ordering::SeqCst);
            });
        }
    }

    async fn deliver(&self, delivery_id: String, event: &Event) {
        let body = event.to_json().to_string();
        let attempts = self.options.retry_delays.len() + 1;
        for attempt in 1..=attempts {
            // Standard Webhooks signs the timestamp, so each attempt is signed afresh.
            let headers = sign(
                self.options.scheme,
                &self.options.secret,
                &delivery_id,
                Utc::now().timestamp(),
                body.as_bytes(),
            );
            let mut request = self
                .client
                .post(&self.options.url)
                .header("content-type", "application/json")
                .body(body.clone());
            for (name, value) in headers {
                request = request.header(name, value);
            }
            let outcome = request.send().await;
            let record = DeliveryAttempt {
                delivery_id: delivery_id.clone(),
                event: event.name().to_string(),
                booking_number: event.booking_number().to_string(),
                claim_status: event.claim_status().map(str::to_string),
                attempt: attempt as u32,
                status: outcome.as_ref().ok().map(|r| r.status().as_u16()),
                error: outcome.as_ref().err().map(describe),
                at: Utc::now(),
            };
            let delivered = record.delivered();
            self.record(record);
            if delivered {
                return;
            }
            if let Some(wait) = self.options.retry_delays.get(attempt - 1) {
                tokio::time::sleep(*wait).await;
            }
        }
    }

    fn record(&self, attempt: DeliveryAttempt) {
        if self.options.log {
            use std::io::Write as _;
            let outcome = match (attempt.status, &attempt.error) {
                (Some(status), _) => status.to_string(),
                (None, Some(error)) => error.clone(),
                (None, None) => "no answer".into(),
            };
            let _ = writeln!(
                std::io::stderr(),
                "webhook {} {} booking {}{} attempt {} → {}",
                attempt.delivery_id,
                attempt.event,
                attempt.booking_number,
                attempt
                    .claim_status
                    .as_deref()
                    .map(|s| format!(" claim {s}"))
                    .unwrap_or_default(),
                attempt.attempt,
                outcome
            );
        }
        let mut attempts = self.attempts.lock().unwrap_or_else(|e| e.into_inner());
        if attempts.len() >= MAX_KEPT_ATTEMPTS {
            attempts.pop_front();
        }
        attempts.push_back(attempt);
    }
}

fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".into()
    } else if error.is_connect() {
        "could not connect".into()
    } else {
        "failed before an answer".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created(booking: &str) -> Scheduled {
        let facts = serde_json::from_value(serde_json::json!({
            "id": "ct_1", "createdAt": "2026-01-01T00:00:00Z",
            "coveredEvent": {"type": "TRIP"},
            "subscription": {"id": "sub_1", "bookingNumber": booking, "subscribedAt": "2026-01-01T00:00:00Z",
                "customer": {"email": "a@example.com", "firstname": "A", "lastname": "B"}},
            "travelers": [{"ageRange": "ADULT", "birthdate": "1980-02-03", "firstName": "A", "lastName": "B"}],
            "product": {"name": "Withdrawal", "type": "WITHDRAWAL"}
        }))
        .unwrap();
        Scheduled {
            after: chrono::Duration::zero(),
            event: Event::ContractCreated(facts),
        }
    }

    /// A receiver that accepts and never answers holds every delivery in flight: past the cap
    /// a new event is recorded as not delivered instead of waiting beside the others.
    #[tokio::test]
    async fn deliveries_in_flight_are_capped() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks", listener.local_addr().unwrap());
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let mut options = WebhookOptions::new(url, Scheme::ProviderDocs, b"secret".to_vec());
        options.retry_delays = Vec::new();
        let mut sender = Sender::new(options).unwrap();
        sender.max_in_flight = 2;
        let sender = Arc::new(sender);
        sender.dispatch(vec![created("B1"), created("B2"), created("B3")]);
        let attempts = sender.attempts();
        assert_eq!(attempts.len(), 1, "{attempts:?}");
        assert_eq!(attempts[0].booking_number, "B3");
        assert!(
            (attempts[0].error.as_deref()).is_some_and(|e| e.starts_with("not delivered")),
            "{attempts:?}"
        );
        assert_eq!(sender.in_flight.load(Ordering::SeqCst), 2);
        held.abort();
    }
}

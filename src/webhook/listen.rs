//! `ppcert webhook listen`: a receiver for a staging's webhook deliveries. It verifies each
//! signature on the raw bytes before it parses or keeps anything, answers 2xx for a valid event
//! and 401 for a missing or wrong signature (keeping only that delivery's metadata),
//! deduplicates replays, appends every delivery to a JSONL file with its verdict, and prints
//! one line per delivery with the sender's text escaped. What it holds in memory is capped.
//! A run embeds the same receiver (`run --webhooks`).

use std::collections::{HashSet, VecDeque};
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::scheme::{Delivery, Scheme, verify};
use crate::console::printable;
use crate::models::events::Summary;
use crate::sandbox::listener::Limits;
use crate::timestamp::Timestamp;

/// What a delivery was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Accepted,
    /// Signed correctly, but not JSON.
    AcceptedNotJson,
    /// A replay of a delivery already accepted: acknowledged, not processed again.
    Duplicate,
    Rejected,
}

/// One delivery as received, with its verdict: a JSONL line, and an evidence entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Received {
    pub at: Timestamp,
    pub verdict: Verdict,
    pub reason: Option<String>,
    pub event: Option<String>,
    pub booking: Option<String>,
    #[serde(default)]
    pub claim: Option<String>,
    pub claim_status: Option<String>,
    pub body: Value,
}

/// Deliveries held in memory (for a run's evidence) at most; later ones are only counted.
pub(crate) const MAX_KEPT_DELIVERIES: usize = 10_000;
/// Bytes of accepted bodies held in memory at most; later bodies are kept as `null` (the
/// JSONL file still has them).
pub(crate) const MAX_KEPT_BODY_BYTES: usize = 16 << 20;
/// Delivery ids remembered for spotting replays; the oldest are forgotten first.
pub(crate) const MAX_REMEMBERED_IDS: usize = 100_000;

#[derive(Default)]
struct Kept {
    list: Vec<Received>,
    body_bytes: usize,
    not_kept: usize,
}

#[derive(Default)]
struct Seen {
    ids: HashSet<String>,
    order: VecDeque<String>,
}

impl Seen {
    /// Whether `id` is new; remembers it, forgetting the oldest beyond the cap.
    fn first(&mut self, id: String) -> bool {
        if !self.ids.insert(id.clone()) {
            return false;
        }
        self.order.push_back(id);
        if self.order.len() > MAX_REMEMBERED_IDS
            && let Some(oldest) = self.order.pop_front()
        {
            self.ids.remove(&oldest);
        }
        true
    }
}

pub(crate) struct Listener {
    scheme: Scheme,
    secret: Vec<u8>,
    out: Mutex<Option<PathBuf>>,
    /// Print one line per delivery (the command does; a run shows its own progress).
    print: bool,
    seen: Mutex<Seen>,
    received: Mutex<Kept>,
}

impl Listener {
    pub(crate) fn new(scheme: Scheme, secret: Vec<u8>, out: Option<PathBuf>) -> Listener {
        Listener {
            scheme,
            secret,
            out: Mutex::new(out),
            print: true,
            seen: Mutex::new(Seen::default()),
            received: Mutex::new(Kept::default()),
        }
    }

    /// A receiver inside a run: silent, keeping what it receives for the evidence.
    pub(crate) fn quiet(scheme: Scheme, secret: Vec<u8>) -> Listener {
        Listener {
            print: false,
            ..Listener::new(scheme, secret, None)
        }
    }

    pub(crate) fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// From now on, append each delivery to `path` too (the run's bundle, once it has one).
    pub(crate) fn write_to(&self, path: PathBuf) {
        *self.out.lock().unwrap_or_else(|e| e.into_inner()) = Some(path);
    }

    /// Every delivery kept so far (the first [`MAX_KEPT_DELIVERIES`]), in order of arrival.
    pub(crate) fn received(&self) -> Vec<Received> {
        self.received
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .list
            .clone()
    }

    /// Deliveries received beyond [`MAX_KEPT_DELIVERIES`]: counted, not kept in memory.
    pub(crate) fn not_kept(&self) -> usize {
        self.received
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .not_kept
    }

    fn judge(&self, headers: &HeaderMap, body: &[u8]) -> (StatusCode, Received) {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let now = chrono::Utc::now().timestamp();
        let delivery = Delivery {
            header: &header,
            body,
        };
        // Verified first: a forged delivery is never parsed, and only its metadata is kept.
        let id = match verify(self.scheme, &self.secret, &delivery, now) {
            Ok(id) => id,
            Err(refusal) => {
                let received = Received {
                    at: Timestamp::now(),
                    verdict: Verdict::Rejected,
                    reason: Some(refusal.to_string()),
                    event: None,
                    booking: None,
                    claim: None,
                    claim_status: None,
                    body: Value::Null,
                };
                return (StatusCode::UNAUTHORIZED, received);
            }
        };
        // A replay is acknowledged (the sender must stop) but not processed twice.
        let key = id.unwrap_or_else(|| crate::digest::sha256_hex(body));
        let first = self
            .seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .first(key);
        let event: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let verdict = match (first, event.is_null()) {
            (false, _) => Verdict::Duplicate,
            (true, true) => Verdict::AcceptedNotJson,
            (true, false) => Verdict::Accepted,
        };
        let summary = Summary::of(&event);
        let received = Received {
            at: Timestamp::now(),
            verdict,
            reason: None,
            event: summary.event,
            booking: summary.booking_number,
            claim: summary.claim_id,
            claim_status: summary.claim_status,
            body: event,
        };
        (StatusCode::OK, received)
    }

    fn keep(&self, status: StatusCode, mut received: Received, size: usize) {
        if self.print {
            // Everything but the status comes from the sender: escaped, so that it cannot
            // forge console lines or colours.
            crate::console::say!(
                "{} {} booking {} claim {} → {}",
                status.as_u16(),
                printable(received.event.as_deref().unwrap_or("(no event)")),
                printable(received.booking.as_deref().unwrap_or("-")),
                printable(received.claim_status.as_deref().unwrap_or("-")),
                printable(&describe(received.verdict, received.reason.as_deref()))
            );
        }
        let out = self.out.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(path) = out {
            let line = serde_json::to_string(&received).unwrap_or_default();
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut file| writeln!(file, "{line}"));
            if let Err(e) = written {
                crate::console::tell!("warning: cannot append to {}: {e}", path.display());
            }
        }
        let mut kept = self.received.lock().unwrap_or_else(|e| e.into_inner());
        if kept.list.len() >= MAX_KEPT_DELIVERIES {
            kept.not_kept += 1;
            return;
        }
        if kept.body_bytes + size > MAX_KEPT_BODY_BYTES {
            received.body = Value::Null;
        } else if !received.body.is_null() {
            kept.body_bytes += size;
        }
        kept.list.push(received);
    }
}

fn describe(verdict: Verdict, reason: Option<&str>) -> String {
    let word = match verdict {
        Verdict::Accepted => "accepted",
        Verdict::AcceptedNotJson => "accepted (body is not JSON)",
        Verdict::Duplicate => "duplicate",
        Verdict::Rejected => "rejected",
    };
    match reason {
        Some(reason) => format!("{word} ({reason})"),
        None => word.to_string(),
    }
}

async fn receive(
    State(listener): State<Arc<Listener>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let (status, received) = listener.judge(&headers, &body);
    listener.keep(status, received, body.len());
    status
}

/// The receiver as a router: every POST, whatever its path, is a delivery.
pub(crate) fn router(listener: Arc<Listener>) -> axum::Router {
    axum::Router::new()
        .fallback(axum::routing::post(receive))
        .with_state(listener)
}

/// Serves within `limits` until `stop`; prints the address first (port 0 picks one).
pub(crate) async fn serve(
    addr: SocketAddr,
    listener: Listener,
    limits: Limits,
    stop: impl std::future::Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let socket = tokio::net::TcpListener::bind(addr).await?;
    crate::console::say!(
        "ppcert webhook listening on http://{}",
        socket.local_addr()?
    );
    crate::sandbox::listener::serve(socket, router(Arc::new(listener)), limits, stop).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flood of deliveries keeps memory bounded and loses no count: what is not kept is
    /// counted, and the evidence's `received` still equals what arrived.
    #[test]
    fn deliveries_beyond_the_kept_ones_are_counted_not_lost() {
        let listener = Listener::quiet(Scheme::Github, b"s".to_vec());
        let unsigned = HeaderMap::new();
        for _ in 0..MAX_KEPT_DELIVERIES + 3 {
            let (status, received) = listener.judge(&unsigned, b"{}");
            listener.keep(status, received, 2);
        }
        assert_eq!(listener.received().len(), MAX_KEPT_DELIVERIES);
        assert_eq!(listener.not_kept(), 3);
        let section = crate::evidence::webhooks::section(
            String::new(),
            "github",
            listener.received(),
            listener.not_kept(),
            &[],
        );
        assert_eq!(section.received, MAX_KEPT_DELIVERIES + 3);
        assert_eq!(section.not_kept, 3);
    }
}

//! `ppcert webhook listen`: a receiver for a staging's webhook deliveries. It verifies each
//! signature on the raw bytes, answers 2xx for a valid event and 401 for a missing or wrong
//! signature, deduplicates replays, appends every delivery to a JSONL file with its verdict,
//! and prints one line per delivery. A run embeds the same receiver (`run --webhooks`).

use std::collections::HashSet;
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
use crate::models::events::Summary;

/// What a delivery was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Accepted,
    /// Signed correctly, but not JSON.
    AcceptedNotJson,
    /// A replay of a delivery already accepted: acknowledged, not processed again.
    Duplicate,
    Rejected,
}

/// One delivery as received, with its verdict: a JSONL line, and an evidence entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Received {
    pub at: String,
    pub verdict: Verdict,
    pub reason: Option<String>,
    pub event: Option<String>,
    pub booking: Option<String>,
    #[serde(default)]
    pub claim: Option<String>,
    pub claim_status: Option<String>,
    pub body: Value,
}

pub struct Listener {
    scheme: Scheme,
    secret: Vec<u8>,
    out: Mutex<Option<PathBuf>>,
    /// Print one line per delivery (the command does; a run shows its own progress).
    print: bool,
    seen: Mutex<HashSet<String>>,
    received: Mutex<Vec<Received>>,
}

impl Listener {
    pub fn new(scheme: Scheme, secret: Vec<u8>, out: Option<PathBuf>) -> Listener {
        Listener {
            scheme,
            secret,
            out: Mutex::new(out),
            print: true,
            seen: Mutex::new(HashSet::new()),
            received: Mutex::new(Vec::new()),
        }
    }

    /// A receiver inside a run: silent, keeping what it receives for the evidence.
    pub fn quiet(scheme: Scheme, secret: Vec<u8>) -> Listener {
        Listener {
            print: false,
            ..Listener::new(scheme, secret, None)
        }
    }

    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// From now on, append each delivery to `path` too (the run's bundle, once it has one).
    pub fn write_to(&self, path: PathBuf) {
        *self.out.lock().unwrap_or_else(|e| e.into_inner()) = Some(path);
    }

    /// Every delivery so far, in order of arrival.
    pub fn received(&self) -> Vec<Received> {
        self.received
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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
        let event: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let (status, verdict, reason) = match verify(self.scheme, &self.secret, &delivery, now) {
            Err(refusal) => (
                StatusCode::UNAUTHORIZED,
                Verdict::Rejected,
                Some(refusal.to_string()),
            ),
            Ok(id) => {
                // A replay is acknowledged (the sender must stop) but not processed twice.
                let key = id.unwrap_or_else(|| crate::digest::sha256_hex(body));
                let first = self
                    .seen
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(key);
                let verdict = match (first, event.is_null()) {
                    (false, _) => Verdict::Duplicate,
                    (true, true) => Verdict::AcceptedNotJson,
                    (true, false) => Verdict::Accepted,
                };
                (StatusCode::OK, verdict, None)
            }
        };
        let summary = Summary::of(&event);
        let received = Received {
            at: chrono::Utc::now().to_rfc3339(),
            verdict,
            reason,
            event: summary.event,
            booking: summary.booking_number,
            claim: summary.claim_id,
            claim_status: summary.claim_status,
            body: event,
        };
        (status, received)
    }

    fn keep(&self, status: StatusCode, received: Received) {
        if self.print {
            crate::say!(
                "{} {} booking {} claim {} → {}",
                status.as_u16(),
                received.event.as_deref().unwrap_or("(no event)"),
                received.booking.as_deref().unwrap_or("-"),
                received.claim_status.as_deref().unwrap_or("-"),
                describe(received.verdict, received.reason.as_deref())
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
                crate::tell!("warning: cannot append to {}: {e}", path.display());
            }
        }
        self.received
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(received);
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
    listener.keep(status, received);
    status
}

/// The receiver as a router: every POST, whatever its path, is a delivery.
pub fn router(listener: Arc<Listener>) -> axum::Router {
    axum::Router::new()
        .fallback(axum::routing::post(receive))
        .with_state(listener)
}

/// Serves until Ctrl-C; prints the address first (port 0 picks one).
pub async fn serve(addr: SocketAddr, listener: Listener) -> std::io::Result<()> {
    let socket = tokio::net::TcpListener::bind(addr).await?;
    crate::say!(
        "ppcert webhook listening on http://{}",
        socket.local_addr()?
    );
    axum::serve(socket, router(Arc::new(listener)))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}

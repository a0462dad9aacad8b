//! `ppcert webhook listen`: a receiver for a staging's webhook deliveries. It verifies each
//! signature on the raw bytes, answers 2xx for a valid event and 401 for a missing or wrong
//! signature, deduplicates replays, appends every delivery to a JSONL file with its verdict,
//! and prints one line per delivery.

use std::collections::HashSet;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};

use super::scheme::{Delivery, Scheme, verify};
use crate::models::events::Summary;

pub struct Listener {
    pub scheme: Scheme,
    pub secret: Vec<u8>,
    pub out: Option<PathBuf>,
    seen: Mutex<HashSet<String>>,
}

impl Listener {
    pub fn new(scheme: Scheme, secret: Vec<u8>, out: Option<PathBuf>) -> Listener {
        Listener {
            scheme,
            secret,
            out,
            seen: Mutex::new(HashSet::new()),
        }
    }
}

/// What a delivery was judged.
fn verdict_line(verdict: &str, event: &Value, reason: Option<&str>) -> Value {
    let summary = Summary::of(event);
    json!({
        "at": chrono::Utc::now().to_rfc3339(),
        "verdict": verdict,
        "reason": reason,
        "event": summary.event,
        "booking": summary.booking_number,
        "claim": summary.claim_id,
        "claim_status": summary.claim_status,
        "body": event,
    })
}

async fn receive(
    State(listener): State<Arc<Listener>>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let now = chrono::Utc::now().timestamp();
    let delivery = Delivery {
        header: &header,
        body: &body,
    };
    let event: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (status, line) = match verify(listener.scheme, &listener.secret, &delivery, now) {
        Err(refusal) => (
            StatusCode::UNAUTHORIZED,
            verdict_line("rejected", &event, Some(&refusal.to_string())),
        ),
        Ok(id) => {
            // A replay is acknowledged (the sender must stop) but not processed twice.
            let key = id.unwrap_or_else(|| crate::scenario::sha256_hex(&body));
            let first = listener
                .seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key);
            let verdict = match (first, event.is_null()) {
                (false, _) => "duplicate",
                (true, true) => "accepted (body is not JSON)",
                (true, false) => "accepted",
            };
            (StatusCode::OK, verdict_line(verdict, &event, None))
        }
    };
    crate::say!(
        "{} {} booking {} claim {} → {}",
        status.as_u16(),
        line["event"].as_str().unwrap_or("(no event)"),
        line["booking"].as_str().unwrap_or("-"),
        line["claim_status"].as_str().unwrap_or("-"),
        match line["reason"].as_str() {
            Some(reason) => format!("{} ({reason})", line["verdict"].as_str().unwrap_or("")),
            None => line["verdict"].as_str().unwrap_or("").to_string(),
        }
    );
    if let Some(path) = &listener.out {
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| writeln!(file, "{line}"));
        if let Err(e) = written {
            crate::tell!("warning: cannot append to {}: {e}", path.display());
        }
    }
    status
}

/// Serves until Ctrl-C; prints the address first (port 0 picks one).
pub async fn serve(addr: SocketAddr, listener: Listener) -> std::io::Result<()> {
    let socket = tokio::net::TcpListener::bind(addr).await?;
    crate::say!(
        "ppcert webhook listening on http://{}",
        socket.local_addr()?
    );
    let app = axum::Router::new()
        .fallback(axum::routing::post(receive))
        .with_state(Arc::new(listener));
    axum::serve(socket, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}

//! Claims the partner made through the proxy count only once their status is known: read from
//! the claim's answer or a later contracts read of its booking, else from one read of the
//! booking's contracts the proxy makes itself when the session ends, with the token the
//! partner's client sent (a GET: nothing is written). A flagged claim fails in the provider's
//! words.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use axum::http::{HeaderMap, HeaderValue};

use super::exchange::{Forwarded, recorded_headers, response_record};
use super::routes::{Recognised, Routes};
use crate::answer::claim_flag::flagged_reason;
use crate::answer::reading::{as_text, builtin, claimed_contract_status};
use crate::environment::Environment;
use crate::models::{CHANGE_FOR_ANY_REASON, ClaimStatus, Operation, WITHDRAWAL};
use crate::record::{Check, ValueRead};
use crate::secret::Secret;
use crate::timestamp::Timestamp;

/// Where bookings' contracts were read, kept for at most this many bookings.
const MAX_READ_URLS: usize = 65_536;

/// A claim the provider accepted, by booking.
struct Watched {
    contract: String,
    token: Secret,
    status: Option<String>,
}

/// The session's claims, and where each booking's contracts were last read from.
#[derive(Default)]
pub(crate) struct ClaimWatch {
    claims: Mutex<HashMap<String, Watched>>,
    read_at: Mutex<HashMap<String, String>>,
}

impl ClaimWatch {
    /// Reads what `forwarded`'s answer says of a claim (its status, when it is a claim or a
    /// contracts read of a claimed booking) into its record, with a failed check when flagged.
    pub(crate) fn observe(
        &self,
        recognised: &Recognised,
        forwarded: &mut Forwarded,
        token: &Secret,
        environment: Environment,
    ) {
        let Some(response) = forwarded.response.as_ref().filter(|r| r.accepted()) else {
            return;
        };
        let Some(booking) = forwarded.booking.clone() else {
            return;
        };
        let body = response.json();
        let mut claims = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        let read = match recognised.operation {
            Operation::Claim => {
                let contract = (recognised.values.iter())
                    .find(|(name, _)| name.contains("contract"))
                    .map(|(_, id)| id.clone())
                    .unwrap_or_default();
                let found = builtin(Operation::Claim, "claim_status", "", &body);
                let status = found.as_ref().and_then(|(value, _)| as_text(value));
                claims.insert(
                    booking,
                    Watched {
                        contract,
                        token: token.clone(),
                        status: status.clone(),
                    },
                );
                found.map(|(_, from)| (status, from))
            }
            Operation::ReadContracts => {
                let mut read_at = self.read_at.lock().unwrap_or_else(|e| e.into_inner());
                // A long session must not grow this without bound: the configured path is
                // the fallback for a booking forgotten here.
                if read_at.len() >= MAX_READ_URLS {
                    read_at.clear();
                }
                read_at.insert(booking.clone(), forwarded.url.clone());
                drop(read_at);
                let Some(watched) = claims.get_mut(&booking) else {
                    return;
                };
                let found = [WITHDRAWAL, CHANGE_FOR_ANY_REASON]
                    .iter()
                    .find_map(|pt| claimed_contract_status(&body, pt, &watched.contract));
                let status = found.as_ref().and_then(|(value, _)| as_text(value));
                if status.is_some() {
                    watched.status = status.clone();
                }
                found.map(|(_, from)| (status, from))
            }
            _ => None,
        };
        if let Some((Some(status), from)) = read {
            record_status(forwarded, status, &from, environment);
        }
    }

    /// A claim whose answer was lost, shown taken by a read: watched like an answered one.
    pub(crate) fn watch(&self, booking: &str, contract: &str, token: &Secret) {
        let mut claims = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        claims
            .entry(booking.to_string())
            .or_insert_with(|| Watched {
                contract: contract.to_string(),
                token: token.clone(),
                status: None,
            });
    }

    /// The claims whose status nothing showed: booking, contract and the partner's token.
    pub(crate) fn unread(&self) -> Vec<(String, Secret)> {
        let claims = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        let mut unread: Vec<(String, Secret)> = claims
            .iter()
            .filter(|(_, watched)| watched.status.is_none())
            .map(|(booking, watched)| (booking.clone(), watched.token.clone()))
            .collect();
        unread.sort_by(|a, b| a.0.cmp(&b.0));
        unread
    }
}

impl ClaimWatch {
    /// Where `booking`'s contracts are read: where the partner last read them, else the
    /// configured path under `upstream`.
    pub(crate) fn contracts_url(
        &self,
        booking: &str,
        upstream: &str,
        routes: &Routes,
    ) -> Option<String> {
        let known = (self.read_at.lock().unwrap_or_else(|e| e.into_inner()))
            .get(booking)
            .cloned();
        known.or_else(|| {
            let values = [("booking.number", booking), ("product_type", WITHDRAWAL)];
            let path = routes.fill(Operation::ReadContracts, &values)?;
            Some(format!("{upstream}{path}"))
        })
    }

    /// ppcert's own read of `booking`'s contracts at `url` with the partner's `token`, read
    /// for the claim's status: the exchange to record.
    pub(crate) async fn confirming_read(
        &self,
        client: &reqwest::Client,
        booking: &str,
        url: String,
        token: &Secret,
        success: crate::endpoints::SuccessRule,
        environment: Environment,
    ) -> Forwarded {
        let mut headers = HeaderMap::new();
        if let Ok(value) = HeaderValue::from_str(&format!("Bearer {}", token.expose())) {
            headers.insert("authorization", value);
        }
        headers.insert("accept", HeaderValue::from_static("application/json"));
        let (started, started_at) = (Instant::now(), Timestamp::now());
        let sent = client.get(&url).headers(headers.clone()).send().await;
        let (response, error) = match sent {
            Ok(answer) => {
                let status = answer.status().as_u16();
                let answer_headers = answer.headers().clone();
                match answer.bytes().await {
                    Ok(bytes) => (
                        Some(response_record(status, &answer_headers, &bytes, token)),
                        None,
                    ),
                    Err(_) => (None, Some("the answer was cut off".to_string())),
                }
            }
            Err(error) => (None, Some(format!("the API did not answer: {error}"))),
        };
        let recognised = Recognised {
            operation: Operation::ReadContracts,
            values: Default::default(),
        };
        let mut forwarded = Forwarded {
            operation: Operation::ReadContracts,
            booking: Some(booking.to_string()),
            method: "GET".into(),
            url,
            started_at,
            duration_ms: started.elapsed().as_millis() as u64,
            request_headers: recorded_headers(&headers, Some(token)),
            request_body: Default::default(),
            request_cut: None,
            request_view: Default::default(),
            response,
            error,
            checks: vec![Check::pass(
                "confirming read",
                "ppcert's own read at the end of the session: the partner's traffic never \
                 showed this claim's status",
            )],
            success,
            reads: Vec::new(),
        };
        self.observe(&recognised, &mut forwarded, token, environment);
        forwarded
    }
}

/// A claim status read from an answer: its value among the exchange's reads, and a failed
/// `not_flagged` check when the provider flagged the claim for manual verification.
fn record_status(forwarded: &mut Forwarded, status: String, from: &str, environment: Environment) {
    // A claim sent as multipart or a JSON:API document is read as the spec's body.
    let view = forwarded.request_view.clone();
    let request = Some(&*view).filter(|v| !v.is_null());
    forwarded
        .checks
        .push(match ClaimStatus::from(status.clone()) {
            ClaimStatus::ManualVerificationNeeded => {
                Check::fail("not_flagged", flagged_reason(request, environment))
            }
            other => Check::pass("not_flagged", format!("claim status {other}")),
        });
    forwarded.reads.push(ValueRead {
        name: "claim_status".into(),
        value: Some(status),
        from: format!("built-in: {from}"),
    });
}

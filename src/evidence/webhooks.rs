//! The evidence's `webhooks` section: every delivery a run received with its signature
//! verdict, and per booking's claim the statuses polling saw beside those webhooks delivered.
//! Not a counted requirement: the provider documents deliveries up to 48 h late.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::models::Operation;
use crate::record::Exchange;
use crate::webhook::listen::{Received, Verdict};

pub(crate) const NOTE: &str = "Webhooks are not a counted requirement: the provider documents deliveries up to 48 h late. This shows what arrived while the run worked; the run did not wait for more.";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WebhooksSection {
    /// Where the run listened.
    pub listening: String,
    pub scheme: String,
    pub note: String,
    /// Every delivery that arrived, kept or not.
    pub received: usize,
    pub rejected: usize,
    /// Deliveries beyond the first `MAX_KEPT_DELIVERIES`: counted in `received`, not listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_kept: usize,
    pub events: Vec<Received>,
    pub claims: Vec<ClaimStatuses>,
}

/// One booking's claim: statuses in the order seen, consecutive repeats folded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ClaimStatuses {
    pub booking_number: String,
    pub polled: Vec<String>,
    pub delivered: Vec<String>,
    /// Every status polling saw also arrived by webhook (a webhook may also bring a status
    /// polling never saw: it ran later).
    pub all_polled_delivered: bool,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

fn push_folded(statuses: &mut Vec<String>, status: &str) {
    if statuses.last().map(String::as_str) != Some(status) {
        statuses.push(status.to_string());
    }
}

pub(crate) fn section(
    listening: String,
    scheme: &str,
    events: Vec<Received>,
    not_kept: usize,
    exchanges: &[Exchange],
) -> WebhooksSection {
    let mut claims: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    let claim_reads = exchanges
        .iter()
        .filter(|e| matches!(e.operation, Operation::Claim | Operation::ReadContracts));
    for exchange in claim_reads {
        let Some(booking) = &exchange.booking_number else {
            continue;
        };
        let read = exchange.reads.iter().find(|r| r.name == "claim_status");
        if let Some(status) = read.and_then(|r| r.value.as_deref()) {
            push_folded(&mut claims.entry(booking.clone()).or_default().0, status);
        }
    }
    let valid = events.iter().filter(|e| e.verdict == Verdict::Accepted);
    for event in valid {
        if let (Some(booking), Some(status)) = (&event.booking, &event.claim_status) {
            push_folded(&mut claims.entry(booking.clone()).or_default().1, status);
        }
    }
    WebhooksSection {
        listening,
        scheme: scheme.to_string(),
        note: NOTE.to_string(),
        received: events.len() + not_kept,
        not_kept,
        rejected: events
            .iter()
            .filter(|e| e.verdict == Verdict::Rejected)
            .count(),
        events,
        claims: claims
            .into_iter()
            .map(|(booking_number, (polled, delivered))| ClaimStatuses {
                all_polled_delivered: polled.iter().all(|s| delivered.contains(s)),
                booking_number,
                polled,
                delivered,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn received(booking: &str, status: &str, verdict: Verdict) -> Received {
        Received {
            at: crate::timestamp::Timestamp::EPOCH,
            verdict,
            reason: None,
            event: Some("claim.updated".into()),
            booking: Some(booking.into()),
            claim: Some("cl_1".into()),
            claim_status: Some(status.into()),
            body: serde_json::Value::Null,
        }
    }

    /// A claim polled as ACCEPTED whose only delivery was forged.
    fn section_with_poll() -> WebhooksSection {
        let exchange: Exchange = serde_json::from_value(serde_json::json!({
            "seq": 1, "flow": "f", "step": "claim", "operation": "claim",
            "booking_number": "BN1", "attempt": 1, "method": "POST", "url": "u",
            "started_at": "2027-01-01T00:00:00Z", "duration_ms": 1,
            "request": {"headers": {}, "body": null},
            "response": null, "outcome": "passed", "checks": [], "error": null,
            "reads": [{"name": "claim_status", "value": "ACCEPTED", "from": "status"}],
        }))
        .unwrap();
        let forged = vec![received("BN1", "ACCEPTED", Verdict::Rejected)];
        section(String::new(), "github", forged, 0, &[exchange])
    }

    #[test]
    fn only_verified_deliveries_count_and_repeats_fold() {
        let events = vec![
            received("BN1", "ACCEPTED", Verdict::Accepted),
            received("BN1", "ACCEPTED", Verdict::Duplicate),
            received("BN1", "REFUNDED", Verdict::Rejected),
            received("BN1", "REFUNDABLE", Verdict::Accepted),
        ];
        let section = section("http://127.0.0.1:1".into(), "provider-docs", events, 0, &[]);
        assert_eq!(section.received, 4);
        assert_eq!(section.rejected, 1);
        assert_eq!(section.claims.len(), 1);
        assert_eq!(section.claims[0].delivered, ["ACCEPTED", "REFUNDABLE"]);
        assert!(
            section.claims[0].all_polled_delivered,
            "nothing polled, nothing missing"
        );
        let polled_only = section_with_poll();
        assert_eq!(polled_only.claims[0].polled, ["ACCEPTED"]);
        assert!(
            !polled_only.claims[0].all_polled_delivered,
            "a forged delivery is not one"
        );
    }
}

//! The claim steps: a WITHDRAWAL or CHANGE_FOR_ANY_REASON claim (postdated with `claimDate` on
//! staging only), and waiting for the claim to reach a status.

use std::time::{Duration, Instant};

use chrono::{SecondsFormat, Utc};
use serde_json::json;

use super::call::Expect;
use super::flow::FlowRunner;
use super::steps::CREATED;
use super::tolerant;
use crate::config::Environment;
use crate::models::{CHANGE_FOR_ANY_REASON, ClaimRequest, Envelope, Operation, WITHDRAWAL};
use crate::record::Check;

/// Claim statuses after which waiting for another is pointless.
const SETTLED: [&str; 3] = ["REFUNDED", "REJECTED", "MANUAL_VERIFICATION_NEEDED"];

/// A postdated claim must land at least 24 h after the subscription; an hour more absorbs clock skew.
const CLAIM_DATE_MARGIN_HOURS: i64 = 25;

impl FlowRunner<'_> {
    /// The staging-only `claimDate`: 25 h after the subscription; never sent to production.
    fn claim_date(&self) -> Option<String> {
        if self.shared.environment == Environment::Production {
            return None;
        }
        let subscribed = self
            .state
            .subscribed_at
            .as_deref()
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
            .map(|at| at.with_timezone(&Utc))
            .unwrap_or_else(Utc::now);
        Some(
            (subscribed + chrono::Duration::hours(CLAIM_DATE_MARGIN_HOURS))
                .to_rfc3339_opts(SecondsFormat::Secs, true),
        )
    }

    pub async fn claim(&mut self, product_type: Option<&str>) -> Result<(), String> {
        let product_type = product_type.unwrap_or(WITHDRAWAL).to_string();
        let contract = self
            .state
            .contracts
            .get(&product_type)
            .cloned()
            .ok_or_else(|| format!("no {product_type} contract id was read"))?;
        self.state.claimed = Some((product_type.clone(), contract.clone()));
        let claim_date = self.claim_date();
        let booking = self.booking();
        let cfar = product_type == CHANGE_FOR_ANY_REASON;
        let request = ClaimRequest {
            modification_cost: cfar
                .then(|| json!(crate::datagen::round_cents(booking.trip_price() * 0.2))),
            product_type: cfar.then(|| product_type.clone()),
            claim_date: claim_date.clone(),
            beneficiary: Some(booking.beneficiary.clone()),
        };
        let context = self.context(None, Some(&contract), claim_date.as_deref());
        let spec = self.spec(
            Operation::Claim,
            "claim",
            &context,
            Some(json!(Envelope { data: request })),
            Expect::Success(CREATED),
        )?;
        let mut pending = self.send(spec).await;
        if let Some(payload) = pending.payload() {
            let status = tolerant::string_field(&payload, "status")
                .or_else(|| tolerant::claim_status(&payload));
            if let Some(status) = &status {
                let flagged = status == "MANUAL_VERIFICATION_NEEDED";
                let detail = if flagged {
                    "flagged MANUAL_VERIFICATION_NEEDED: claim within 24 h of the subscription"
                        .to_string()
                } else {
                    format!("claim status {status}")
                };
                pending
                    .checks
                    .push(Check::new("not_flagged", !flagged, detail).warning());
            }
            self.state.claim_status = status;
        }
        self.conclude(pending)
    }

    /// Polls the contracts until the claim shows `target`; a settled other status fails at once.
    pub async fn await_claim_status(
        &mut self,
        target: &str,
        timeout_secs: u64,
        interval_ms: u64,
    ) -> Result<(), String> {
        let (product_type, contract) = self.state.claimed.clone().ok_or("no claim was made")?;
        let deadline = Instant::now() + Duration::from_secs(timeout_secs);
        loop {
            let mut pending = self.read_contracts_call("await_claim_status").await?;
            let status = pending.payload().and_then(|payload| {
                let (found, _) = tolerant::contracts(&payload, &product_type);
                found
                    .iter()
                    .find(|c| tolerant::string_field(c, "id").as_deref() == Some(contract.as_str()))
                    .and_then(|c| tolerant::claim_status(c))
            });
            pending.checks.push(Check::new(
                "claim_status",
                status.is_some(),
                format!(
                    "claim status: {}",
                    status.as_deref().unwrap_or("unreadable")
                ),
            ));
            self.conclude(pending)?;
            let status = status.unwrap_or_default();
            self.state.claim_status = Some(status.clone());
            if status == target {
                return Ok(());
            }
            if SETTLED.contains(&status.as_str()) {
                return Err(format!("claim settled in {status}, not {target}"));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "claim still {status} after {timeout_secs} s, waiting for {target}"
                ));
            }
            if !self
                .shared
                .cancel
                .sleep(Duration::from_millis(interval_ms))
                .await
            {
                return Err("interrupted while waiting".into());
            }
        }
    }
}

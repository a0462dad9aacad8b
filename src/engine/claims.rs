//! The claim steps: a WITHDRAWAL or CHANGE_FOR_ANY_REASON claim (postdated with `claimDate` on
//! staging only), and waiting for the claim to reach a status.

use super::step::{StepError, missing};
use std::time::{Duration, Instant};

use chrono::{SecondsFormat, Utc};
use serde_json::json;

use super::step::StepContext;
use super::step::{confirm_by_reading, read_claimed_status, status_check};
use super::steps::read_contracts_call;
use crate::answer::reading::{Need, as_text};
use crate::environment::Environment;
use crate::models::{ClaimRequest, ClaimStatus, Envelope, Operation, ProductType};
use crate::record::Phase;

/// A postdated claim must land at least 24 h after the subscription; an hour more absorbs clock skew.
const CLAIM_DATE_MARGIN_HOURS: i64 = 25;

/// The staging-only `claimDate` as (date-time 25 h after the subscription, the first UTC day
/// whose 00:00 is at least that late); never sent to production.
fn claim_dates(cx: &StepContext<'_>) -> Option<(String, String)> {
    if cx.shared.environment == Environment::Production {
        return None;
    }
    let subscribed = cx
        .state
        .subscribed_at
        .map_or_else(Utc::now, |at| at.as_datetime());
    let at = subscribed + chrono::Duration::hours(CLAIM_DATE_MARGIN_HOURS);
    Some((
        at.to_rfc3339_opts(SecondsFormat::Secs, true),
        claim_day(at).format("%Y-%m-%d").to_string(),
    ))
}

pub(super) async fn claim(
    cx: &mut StepContext<'_>,
    product_type: Option<ProductType>,
) -> Result<(), StepError> {
    let product_type = product_type.unwrap_or(ProductType::Withdrawal);
    let contract = cx
        .state
        .contracts
        .get(&product_type)
        .cloned()
        .ok_or_else(|| missing(format!("no {product_type} contract id was read")))?;
    cx.state.claimed = Some((product_type, contract.clone()));
    let dates = claim_dates(cx);
    let booking = cx.booking();
    let cfar = product_type == ProductType::ChangeForAnyReason;
    let request = ClaimRequest {
        modification_cost: cfar.then(|| {
            json!(crate::datagen::round_money(
                booking.trip_price() * 0.2,
                &booking.currency
            ))
        }),
        product_type: cfar.then(|| product_type.as_str().to_string()),
        // The spec types claimDate as a date: the day form is what the API is sure to read.
        claim_date: dates.as_ref().map(|(_, day)| day.clone()),
        beneficiary: Some(booking.beneficiary.clone()),
    };
    let mut context = cx.context(None, Some(&contract), dates);
    context["product_type"] = json!(product_type);
    let (step, expect) = (cx.step_name.clone(), cx.success(Operation::Claim));
    let body = Some(json!(Envelope { data: request }));
    let spec = cx.spec(Operation::Claim, &step, &context, body, expect)?;
    let request = spec.body.as_ref().and_then(|b| b.json()).cloned();
    let pending = cx.send(spec).await;
    let claimed = Claimed {
        product_type,
        contract: &contract,
        context: &context,
        request: request.as_ref(),
    };
    settle_claim(cx, pending, claimed).await
}

/// The claim a claim step sent: on which contract, with which context and body.
pub(crate) struct Claimed<'a> {
    pub product_type: ProductType,
    pub contract: &'a str,
    pub context: &'a serde_json::Value,
    pub request: Option<&'a serde_json::Value>,
}

/// What follows a claim's answer, in a run and in `ppcert probe` alike: its status read from
/// the answer, else from the booking's contracts read a bounded time
/// ([`confirm_by_reading`]); a flagged claim fails with its `not_flagged` check.
pub(crate) async fn settle_claim(
    cx: &mut StepContext<'_>,
    mut pending: crate::engine::caller::Pending,
    claimed: Claimed<'_>,
) -> Result<(), StepError> {
    let Claimed {
        product_type,
        contract,
        context,
        request,
    } = claimed;
    pending.payload();
    // A claim answered 202 was confirmed by reads (`step/confirm.rs`): its status is read from
    // the answer that settled it, a contracts read's by the claimed contract.
    let status = if pending.spec.operation == Operation::ReadContracts {
        read_claimed_status(cx, &mut pending, product_type, contract, Need::Optional)
    } else {
        cx.read_builtin(&mut pending, "claim_id", context, Need::Optional);
        cx.read_builtin(&mut pending, "claim_status", context, Need::Optional)
            .as_ref()
            .and_then(as_text)
    };
    let status = status.map(ClaimStatus::from);
    if let Some(status) = &status {
        let environment = cx.shared.environment;
        (pending.checks).push(status_check(status, request, environment));
    }
    cx.state.claim_status = status.clone();
    let accepted = pending.status_ok();
    if status.is_none() && accepted && pending.phase == Phase::Sent {
        // Its status is read next: the journal says the claim is under confirmation.
        pending.phase = Phase::Pending;
    }
    cx.conclude(pending)?;
    if status.is_none() && accepted {
        return confirm_by_reading(cx, product_type, contract, request).await;
    }
    Ok(())
}

/// Polls the contracts until the claim shows `target`; a settled other status fails at once.
pub(super) async fn await_claim_status(
    cx: &mut StepContext<'_>,
    target: &ClaimStatus,
    timeout_secs: u64,
    interval_ms: u64,
) -> Result<(), StepError> {
    let (product_type, contract) = cx
        .state
        .claimed
        .clone()
        .ok_or_else(|| missing("no claim was made"))?;
    let deadline = Instant::now() + Duration::from_secs(timeout_secs);
    loop {
        let mut pending = read_contracts_call(cx, &cx.step_name.clone()).await?;
        pending.payload();
        let status = read_claimed_status(cx, &mut pending, product_type, &contract, Need::Required);
        cx.conclude(pending)?;
        let status = ClaimStatus::from(status.unwrap_or_default());
        cx.state.claim_status = Some(status.clone());
        if status == *target {
            return Ok(());
        }
        if status.settled() {
            return Err(StepError::ClaimStatus(format!(
                "claim settled in {status}, not {target}"
            )));
        }
        if Instant::now() >= deadline {
            return Err(StepError::ClaimStatus(format!(
                "claim still {status} after {timeout_secs} s, waiting for {target}"
            )));
        }
        if !cx
            .shared
            .cancel
            .sleep(Duration::from_millis(interval_ms))
            .await
        {
            return Err(StepError::Interrupted);
        }
    }
}

/// The first UTC day whose 00:00 is at or after `at`.
pub(crate) fn claim_day(at: chrono::DateTime<Utc>) -> chrono::NaiveDate {
    let day = at.date_naive();
    if at.time() == chrono::NaiveTime::MIN {
        day
    } else {
        day.succ_opt().unwrap_or(day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_claim_day_is_the_first_midnight_at_or_after() {
        let at = Utc.with_ymd_and_hms(2026, 3, 1, 10, 30, 0).unwrap();
        assert_eq!(claim_day(at).to_string(), "2026-03-02");
        let midnight = Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap();
        assert_eq!(claim_day(midnight).to_string(), "2026-03-01");
        let new_year = Utc.with_ymd_and_hms(2026, 12, 31, 23, 59, 59).unwrap();
        assert_eq!(claim_day(new_year).to_string(), "2027-01-01");
    }
}

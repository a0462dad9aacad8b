//! A claim counts only once its status is known: read from the claim's answer, else from the
//! booking's contracts, polled a bounded time. A claim the provider flagged
//! `MANUAL_VERIFICATION_NEEDED` fails its step in the provider's words; one whose status never
//! showed fails it as unconfirmed.

use std::time::Instant;

use serde_json::{Value, json};

use super::context::StepContext;
use super::error::StepError;
use crate::answer::claim_flag::flagged_reason;
use crate::answer::reading::{Need, as_text, claimed_contract_status};
use crate::engine::caller::Pending;
use crate::engine::steps::read_contracts_call;
use crate::environment::Environment;
use crate::models::{ClaimStatus, Operation, ProductType};
use crate::record::Check;
use crate::record::Phase;

/// The check a read status gets: passed unless the provider flagged the claim.
pub(crate) fn status_check(
    status: &ClaimStatus,
    request: Option<&Value>,
    environment: Environment,
) -> Check {
    match status {
        ClaimStatus::ManualVerificationNeeded => {
            Check::fail("not_flagged", flagged_reason(request, environment))
        }
        other => Check::pass("not_flagged", format!("claim status {other}")),
    }
}

/// The claimed contract's claim status in a contracts answer (its capture, else the built-in
/// reading), recorded as the exchange's read.
pub(crate) fn read_claimed_status(
    cx: &StepContext<'_>,
    pending: &mut Pending,
    product_type: ProductType,
    contract: &str,
    need: Need,
) -> Option<String> {
    let mut context = cx.context(None, Some(contract), None);
    context["product_type"] = json!(product_type);
    let fallback = |body: &Value| claimed_contract_status(body, product_type.as_str(), contract);
    let read = cx.read_value(pending, "claim_status", &context, need, fallback);
    read.as_ref().and_then(as_text)
}

/// Reads the booking's contracts until the claimed contract shows a status, every `every` of
/// `[endpoints.claim.confirm]` for at most its `timeout` (500 ms and 10 s unless set); each
/// read is a confirmation exchange of the claim step, never counted.
pub(crate) async fn confirm_by_reading(
    cx: &mut StepContext<'_>,
    product_type: ProductType,
    contract: &str,
    request: Option<&Value>,
) -> Result<(), StepError> {
    let (every, timeout) = cx.shared.endpoints.confirm_bounds(Operation::Claim);
    let deadline = Instant::now() + timeout;
    let mut reads = 0;
    loop {
        let mut pending = read_contracts_call(cx, &cx.step_name.clone()).await?;
        pending.phase = Phase::Confirm;
        pending.confirms = Some(Operation::Claim);
        pending.payload();
        reads += 1;
        let status = read_claimed_status(cx, &mut pending, product_type, contract, Need::Optional)
            .map(ClaimStatus::from);
        if let Some(status) = &status {
            pending
                .checks
                .push(status_check(status, request, cx.shared.environment));
        }
        cx.state.claim_status = status.clone();
        // A read that showed no status and will be followed by another is a poll.
        pending.poll = status.is_none() && Instant::now() < deadline;
        cx.conclude(pending)?;
        if status.is_some() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(StepError::ClaimStatus(format!(
                "claim status unconfirmed: the claim's answer carried no status and {reads} \
                 reads of the contracts over {} s showed none for {product_type} contract \
                 {contract}; an unconfirmed claim does not count ({})",
                timeout.as_secs_f32(),
                unconfirmed_hint(cx)
            )));
        }
        if !cx.shared.cancel.sleep(every).await {
            return Err(StepError::Interrupted);
        }
    }
}

/// What settles an unconfirmed claim: where the built-in reading looked for its status found
/// none, a `claim_status` capture saying where the staging writes it; else more time.
fn unconfirmed_hint(cx: &StepContext<'_>) -> String {
    let later = "a staging that decides later needs a longer `[endpoints.claim.confirm] timeout`";
    let endpoints = &cx.shared.endpoints;
    let empty = Default::default();
    let nowhere = crate::endpoints::AnswerView {
        body: &Value::Null,
        headers: &empty,
    };
    let context = cx.context(None, None, None);
    let configured = [Operation::Claim, Operation::ReadContracts]
        .into_iter()
        .any(|op| {
            endpoints
                .capture(op, "claim_status", &context, nowhere)
                .is_some()
        })
        || (endpoints.confirm_captures(Operation::Claim)).contains(&"claim_status".to_string());
    if configured {
        return format!("the configured `claim_status` capture found none; {later}");
    }
    format!(
        "the built-in reading found no claim status there: if the staging writes it under \
         another name, say where with `[endpoints.read_contracts.capture] claim_status = \
         \"$...\"` (or `[endpoints.claim.capture] claim_status` for the claim's answer; \
         `ppcert probe` finds it); {later}"
    )
}

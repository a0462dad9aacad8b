//! A claim the provider flagged `MANUAL_VERIFICATION_NEEDED`, in words: what the provider
//! said, and on staging the rule that avoids it, with the `claimDate` the claim sent.

use serde_json::Value;

use crate::environment::Environment;

/// Why a flagged claim failed, with the rule that avoids it on staging; `request` is the
/// claim's body when known.
pub(crate) fn flagged_reason(request: Option<&Value>, environment: Environment) -> String {
    let said = "the provider flagged the claim MANUAL_VERIFICATION_NEEDED (claims within 24 h \
                of the subscription are held for manual verification); it does not count";
    if environment == Environment::Production {
        return said.to_string();
    }
    let rule = "on staging send `claimDate` at least 24 h after the subscription \
                (`\"claimDate\": {{ claim_day | tojson }}` in `[endpoints.claim] body`)";
    let sent = request.map(|body| {
        body.pointer("/data/claimDate")
            .or(body.get("claimDate"))
            .and_then(Value::as_str)
    });
    match sent {
        Some(Some(day)) => format!("{said}: the claim sent claimDate {day}; {rule}"),
        Some(None) => format!("{said}: the claim sent no claimDate; {rule}"),
        None => format!("{said}: {rule}"),
    }
}

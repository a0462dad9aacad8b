//! Scenario checks TOML cannot express: the data profile is usable, and each step of a flow has
//! what it needs from the steps before it.

use super::model::{ErrorCase, ExpectedStatus, FlowSpec, Scenario, Step};
use crate::bounds;
use crate::datagen::DataProfile;
use crate::models::{CHANGE_FOR_ANY_REASON, ClaimStatus, WITHDRAWAL};

/// The flow at fault, if one is, and what is wrong.
pub type CheckError = (Option<String>, String);

pub fn check(scenario: &Scenario) -> Result<(), CheckError> {
    if scenario.flows.is_empty() {
        return Err((None, "a scenario needs at least one flow".into()));
    }
    check_profile(&scenario.data).map_err(|message| (None, message))?;
    for flow in &scenario.flows {
        let fail = |message: String| {
            (
                Some(flow.name.clone()),
                format!("flow `{}`: {message}", flow.name),
            )
        };
        if flow.repeat == 0 || flow.steps.is_empty() {
            return Err(fail("needs repeat >= 1 and at least one step".into()));
        }
        bounds::check("repeat", flow.repeat, &bounds::REPEAT).map_err(fail)?;
        check_steps(flow, &scenario.data).map_err(fail)?;
    }
    Ok(())
}

fn check_profile(p: &DataProfile) -> Result<(), String> {
    if p.min_days_ahead < 1
        || p.max_days_ahead < p.min_days_ahead
        || p.max_travelers < 1
        || p.flight_plans < 1
    {
        return Err("data: need 1 <= min_days_ahead <= max_days_ahead, max_travelers >= 1, flight_plans >= 1".into());
    }
    let within = [
        ("data.max_days_ahead", p.max_days_ahead, &bounds::DAYS_AHEAD),
        ("data.max_travelers", p.max_travelers, &bounds::TRAVELERS),
        ("data.flight_plans", p.flight_plans, &bounds::FLIGHT_PLANS),
    ];
    for (key, value, range) in within {
        bounds::check(key, value, range)?;
    }
    for (i, t) in p.product_types.iter().enumerate() {
        if t != WITHDRAWAL && t != CHANGE_FOR_ANY_REASON {
            return Err(format!(
                "data.product_types[{i}]: unknown product type `{t}`"
            ));
        }
    }
    Ok(())
}

fn check_steps(flow: &FlowSpec, profile: &DataProfile) -> Result<(), String> {
    let mut made = Made::default();
    for (i, step) in flow.steps.iter().enumerate() {
        made.apply(step, profile).map_err(|problem| match problem {
            Problem::Needs(what) => {
                format!("step {} (`{}`) needs {what} before it", i + 1, step.name())
            }
            Problem::Invalid(message) => format!("step {}: {message}", i + 1),
        })?;
    }
    Ok(())
}

enum Problem {
    /// An earlier step it depends on is missing.
    Needs(&'static str),
    /// The step itself is malformed.
    Invalid(String),
}

fn need(ok: bool, what: &'static str) -> Result<(), Problem> {
    if ok {
        Ok(())
    } else {
        Err(Problem::Needs(what))
    }
}

/// What a flow's steps have produced so far.
#[derive(Default)]
struct Made {
    open_quote: bool,
    booking: bool,
    contract: bool,
    claim: bool,
}

impl Made {
    fn apply(&mut self, step: &Step, profile: &DataProfile) -> Result<(), Problem> {
        match step {
            Step::Quote => self.open_quote = true,
            Step::Subscribe => {
                need(self.open_quote, "a `quote`")?;
                need(
                    !self.booking,
                    "no earlier `subscribe` (one booking per flow)",
                )?;
                (self.open_quote, self.booking) = (false, true);
            }
            Step::Update { .. } | Step::ReportFlightCancellation => {
                need(self.booking, "a `subscribe`")?
            }
            Step::ReadContracts { .. } => {
                need(self.booking, "a `subscribe`")?;
                self.contract = true;
            }
            Step::Claim { product_type } => {
                need(
                    self.contract,
                    "a `read_contracts` (the claim is made on the contract id it reads)",
                )?;
                if let Some(t) = product_type
                    && !profile.product_types.iter().any(|name| name == t.as_str())
                {
                    return Err(Problem::Invalid(format!(
                        "product_type `{t}` is not in data.product_types"
                    )));
                }
                self.claim = true;
            }
            Step::DeleteQuote => {
                need(self.open_quote, "a `quote` not yet used by a subscription")?;
                self.open_quote = false;
            }
            Step::AwaitClaimStatus { status, .. } => {
                need(self.claim, "a `claim`")?;
                if let ClaimStatus::Other(status) = status {
                    return Err(Problem::Invalid(format!("unknown claim status `{status}`")));
                }
            }
            Step::ExpectError { case, status } => self.check_refusal(*case, status)?,
        }
        Ok(())
    }

    fn check_refusal(&self, case: ErrorCase, status: &ExpectedStatus) -> Result<(), Problem> {
        if let ExpectedStatus::Class(class) = status
            && !matches!(class.as_str(), "4xx" | "5xx")
        {
            return Err(Problem::Invalid(format!(
                "status must be a code or \"4xx\", not `{class}`"
            )));
        }
        if matches!(
            case,
            ErrorCase::ReusedBookingNumber | ErrorCase::ReusedQuoteReference
        ) {
            need(self.booking, "a `subscribe`")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::parse;

    /// A scenario file with one flow `f` (its name on line 6) after an optional data section.
    fn scenario(data: &str, steps: &str) -> String {
        format!(
            "name = \"x\"\ndescription = \"d\"\n{data}\n\n[[flows]]\nname = \"f\"\nsteps = [{steps}]\n"
        )
    }

    #[test]
    fn each_rule_names_the_flow_its_line_and_the_step() {
        let q = r#"{ action = "quote" }, "#;
        let sub = r#"{ action = "quote" }, { action = "subscribe" }, "#;
        let claim = r#"{ action = "quote" }, { action = "subscribe" }, { action = "read_contracts" }, { action = "claim" }, "#;
        let cases = [
            (
                r#"{ action = "subscribe" }"#.to_string(),
                "step 1 (`subscribe`) needs a `quote` before it",
            ),
            (
                format!(r#"{sub}{q}{{ action = "subscribe" }}"#),
                "step 4 (`subscribe`) needs no earlier `subscribe` (one booking per flow)",
            ),
            (
                format!(r#"{q}{{ action = "update" }}"#),
                "step 2 (`update`) needs a `subscribe` before it",
            ),
            (
                format!(r#"{q}{{ action = "report_flight_cancellation" }}"#),
                "step 2 (`report_flight_cancellation`) needs a `subscribe`",
            ),
            (
                format!(r#"{sub}{{ action = "delete_quote" }}"#),
                "step 3 (`delete_quote`) needs a `quote` not yet used by a subscription",
            ),
            (
                format!(
                    r#"{sub}{{ action = "read_contracts" }}, {{ action = "await_claim_status", status = "REFUNDED" }}"#
                ),
                "step 4 (`await_claim_status`) needs a `claim` before it",
            ),
            (
                format!(r#"{claim}{{ action = "await_claim_status", status = "PAID" }}"#),
                "step 5: unknown claim status `PAID`",
            ),
            (
                format!(
                    r#"{sub}{{ action = "read_contracts" }}, {{ action = "claim", product_type = "CHANGE_FOR_ANY_REASON" }}"#
                ),
                "step 4: product_type `CHANGE_FOR_ANY_REASON` is not in data.product_types",
            ),
            (
                r#"{ action = "expect_error", case = "bad_token", status = "3xx" }"#.to_string(),
                "step 1: status must be a code or \"4xx\", not `3xx`",
            ),
            (
                format!(
                    r#"{q}{{ action = "expect_error", case = "reused_booking_number", status = 409 }}"#
                ),
                "step 2 (`expect_error:reused_booking_number`) needs a `subscribe` before it",
            ),
        ];
        for (steps, expected) in cases {
            let err = parse("x.toml", &scenario("", &steps)).unwrap_err();
            assert_eq!(err.line, Some(6), "{steps}");
            assert!(
                err.message.starts_with("flow `f`: ") && err.message.contains(expected),
                "{steps}: {}",
                err.message
            );
        }
    }

    #[test]
    fn a_bad_data_profile_or_an_empty_scenario_is_refused() {
        let quote = r#"{ action = "quote" }"#;
        for (data, expected) in [
            ("[data]\nmin_days_ahead = 0", "need 1 <= min_days_ahead"),
            (
                "[data]\nmin_days_ahead = 40\nmax_days_ahead = 30",
                "need 1 <= min_days_ahead <= max_days_ahead",
            ),
            (
                "[data]\nmin_days_ahead = 4000000000\nmax_days_ahead = 4000000000",
                "data.max_days_ahead = 4000000000 is out of bounds (1 to 3650)",
            ),
            (
                "[data]\nflight_plans = 1000",
                "data.flight_plans = 1000 is out of bounds",
            ),
            (
                "[data]\nproduct_types = [\"WITHDRAWAL\", \"HOTEL\"]",
                "data.product_types[1]: unknown product type `HOTEL`",
            ),
        ] {
            let err = parse("x.toml", &scenario(data, quote)).unwrap_err();
            assert!(err.message.contains(expected), "{data}: {}", err.message);
        }
        // A claim's product type is a type: an unknown one is refused where it is written.
        let steps = r#"{ action = "claim", product_type = "HOTEL" }"#;
        let err = parse("x.toml", &scenario("", steps)).unwrap_err();
        assert_eq!(err.line, Some(7));
        assert!(
            err.message.contains(
                "unknown variant `HOTEL`, expected `WITHDRAWAL` or `CHANGE_FOR_ANY_REASON`"
            ),
            "{}",
            err.message
        );
        let empty = parse("x.toml", "name = \"x\"\ndescription = \"d\"\nflows = []\n").unwrap_err();
        assert!(
            empty.message.contains("at least one flow"),
            "{}",
            empty.message
        );
        let no_steps = parse("x.toml", &scenario("", "")).unwrap_err();
        assert!(
            no_steps.message.contains("at least one step"),
            "{}",
            no_steps.message
        );
    }
}

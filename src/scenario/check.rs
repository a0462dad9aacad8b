//! Scenario checks TOML cannot express: the data profile is usable, and each step of a flow has
//! what it needs from the steps before it.

use super::model::{ErrorCase, ExpectedStatus, FlowSpec, Scenario, Step};
use crate::bounds::{self, OutOfBounds};
use crate::datagen::DataProfile;
use crate::models::{CHANGE_FOR_ANY_REASON, ClaimStatus, WITHDRAWAL};

/// Why a scenario was refused; a flow's problem names the flow, so its line can be found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum CheckError {
    #[error("a scenario needs at least one flow")]
    NoFlows,
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error("flow `{flow}`: {problem}")]
    Flow { flow: String, problem: FlowProblem },
}

impl CheckError {
    /// The flow at fault, if one is.
    pub(crate) fn flow(&self) -> Option<&str> {
        match self {
            CheckError::Flow { flow, .. } => Some(flow),
            CheckError::NoFlows | CheckError::Profile(_) => None,
        }
    }

    /// The `[data]` key at fault, if one is named in the file.
    pub(crate) fn key(&self) -> Option<&'static str> {
        match self {
            CheckError::Profile(ProfileError::Pattern(_)) => Some("booking_number_pattern"),
            _ => None,
        }
    }
}

/// What is wrong with `[data]`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ProfileError {
    #[error(
        "data: need 1 <= min_days_ahead <= max_days_ahead, max_travelers >= 1, flight_plans >= 1"
    )]
    Inconsistent,
    #[error(transparent)]
    OutOfBounds(#[from] OutOfBounds),
    #[error("data.currency = \"{0}\" is not an active ISO 4217 currency code (e.g. EUR, USD, JPY)")]
    Currency(String),
    #[error("data.product_types[{index}]: unknown product type `{name}`")]
    UnknownProductType { index: usize, name: String },
    #[error("data.booking_number_pattern: {0}")]
    Pattern(String),
}

/// What is wrong with one flow.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum FlowProblem {
    #[error("needs repeat >= 1 and at least one step")]
    Empty,
    #[error(transparent)]
    OutOfBounds(#[from] OutOfBounds),
    /// Step `number` (from 1) depends on a step the flow lacks before it.
    #[error("step {number} (`{step}`) needs {needs} before it")]
    Needs {
        number: usize,
        step: String,
        needs: &'static str,
    },
    #[error("step {number}: {problem}")]
    Invalid { number: usize, problem: StepProblem },
}

/// A step malformed in itself.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum StepProblem {
    #[error("product_type `{0}` is not in data.product_types")]
    ProductType(String),
    #[error("unknown claim status `{0}`")]
    ClaimStatus(String),
    #[error("status must be a code or \"4xx\", not `{0}`")]
    StatusClass(String),
}

pub(crate) fn check(scenario: &Scenario) -> Result<(), CheckError> {
    if scenario.flows.is_empty() {
        return Err(CheckError::NoFlows);
    }
    check_profile(&scenario.data)?;
    for flow in &scenario.flows {
        let fail = |problem: FlowProblem| CheckError::Flow {
            flow: flow.name.clone(),
            problem,
        };
        if flow.repeat == 0 || flow.steps.is_empty() {
            return Err(fail(FlowProblem::Empty));
        }
        bounds::check("repeat", flow.repeat, &bounds::REPEAT).map_err(|e| fail(e.into()))?;
        check_steps(flow, &scenario.data).map_err(fail)?;
    }
    if let Some(pattern) = &scenario.data.booking_number_pattern {
        // One booking per flow instance at `--scale 1`; `run` checks again at its scale.
        let bookings = scenario.flows.iter().map(|f| u64::from(f.repeat)).sum();
        crate::datagen::numbers::draw(pattern, 0, bookings).map_err(ProfileError::Pattern)?;
    }
    Ok(())
}

fn check_profile(p: &DataProfile) -> Result<(), ProfileError> {
    if p.min_days_ahead < 1
        || p.max_days_ahead < p.min_days_ahead
        || p.max_travelers < 1
        || p.flight_plans < 1
    {
        return Err(ProfileError::Inconsistent);
    }
    let within = [
        ("data.max_days_ahead", p.max_days_ahead, &bounds::DAYS_AHEAD),
        ("data.max_travelers", p.max_travelers, &bounds::TRAVELERS),
        ("data.flight_plans", p.flight_plans, &bounds::FLIGHT_PLANS),
    ];
    for (key, value, range) in within {
        bounds::check(key, value, range)?;
    }
    if !crate::models::money::is_currency(&p.currency) {
        let shown = crate::console::printable(&p.currency);
        return Err(ProfileError::Currency(shown));
    }
    for (index, t) in p.product_types.iter().enumerate() {
        if t != WITHDRAWAL && t != CHANGE_FOR_ANY_REASON {
            return Err(ProfileError::UnknownProductType {
                index,
                name: t.clone(),
            });
        }
    }
    Ok(())
}

fn check_steps(flow: &FlowSpec, profile: &DataProfile) -> Result<(), FlowProblem> {
    let mut made = Made::default();
    for (i, step) in flow.steps.iter().enumerate() {
        made.apply(step, profile).map_err(|problem| match problem {
            Problem::Needs(needs) => FlowProblem::Needs {
                number: i + 1,
                step: step.name(),
                needs,
            },
            Problem::Invalid(problem) => FlowProblem::Invalid {
                number: i + 1,
                problem,
            },
        })?;
    }
    Ok(())
}

enum Problem {
    /// An earlier step it depends on is missing.
    Needs(&'static str),
    /// The step itself is malformed.
    Invalid(StepProblem),
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
    /// Quotes made and not yet used or deleted: a `quote` step makes one per flight plan.
    open_quotes: u32,
    booking: bool,
    contract: bool,
    claim: bool,
}

impl Made {
    fn apply(&mut self, step: &Step, profile: &DataProfile) -> Result<(), Problem> {
        match step {
            Step::Quote => self.open_quotes += profile.flight_plans.max(1),
            Step::Subscribe => {
                need(self.open_quotes > 0, "a `quote`")?;
                need(
                    !self.booking,
                    "no earlier `subscribe` (one booking per flow)",
                )?;
                (self.open_quotes, self.booking) = (0, true);
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
                    return Err(Problem::Invalid(StepProblem::ProductType(t.to_string())));
                }
                self.claim = true;
            }
            Step::DeleteQuote => {
                need(
                    self.open_quotes > 0,
                    "a `quote` not yet used by a subscription",
                )?;
                self.open_quotes -= 1;
            }
            Step::AwaitClaimStatus { status, .. } => {
                need(self.claim, "a `claim`")?;
                if let ClaimStatus::Other(status) = status {
                    return Err(Problem::Invalid(StepProblem::ClaimStatus(status.clone())));
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
            return Err(Problem::Invalid(StepProblem::StatusClass(class.clone())));
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

    /// A staging may need the contracts read before the update (its ETag) and again after
    /// the claim; a step may repeat. Any order the data allows is accepted.
    #[test]
    fn steps_in_any_order_the_data_allows_are_accepted() {
        for steps in [
            r#"{ action = "quote" }, { action = "subscribe" }, { action = "read_contracts" }, { action = "update" }, { action = "claim" }, { action = "read_contracts" }"#,
            r#"{ action = "quote" }, { action = "subscribe" }, { action = "read_contracts" }, { action = "update" }, { action = "read_contracts" }, { action = "update" }, { action = "read_contracts" }, { action = "claim" }"#,
            r#"{ action = "quote" }, { action = "quote" }, { action = "delete_quote" }, { action = "subscribe" }, { action = "report_flight_cancellation" }, { action = "read_contracts" }, { action = "claim" }"#,
        ] {
            parse("x.toml", &scenario("", steps)).unwrap_or_else(|e| panic!("{steps}: {e:?}"));
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

    #[test]
    fn each_refusal_is_a_variant_naming_what_was_wrong() {
        use super::*;
        let checked = |data: &str, steps: &str| {
            check(&toml::from_str::<Scenario>(&scenario(data, steps)).unwrap()).unwrap_err()
        };
        let update = checked("", r#"{ action = "update" }"#);
        assert_eq!(update.flow(), Some("f"));
        assert!(matches!(
            update,
            CheckError::Flow { problem: FlowProblem::Needs { number: 1, ref step, .. }, .. } if step == "update"
        ));
        let paid = checked("", r#"{ action = "await_claim_status", status = "PAID" }"#);
        assert!(matches!(
            paid,
            CheckError::Flow {
                problem: FlowProblem::Needs { .. },
                ..
            }
        ));
        let plans = checked("[data]\nflight_plans = 1000", r#"{ action = "quote" }"#);
        assert!(matches!(
            plans,
            CheckError::Profile(ProfileError::OutOfBounds(OutOfBounds { value: 1000, .. }))
        ));
        let hotel = checked(
            "[data]\nproduct_types = [\"HOTEL\"]",
            r#"{ action = "quote" }"#,
        );
        assert_eq!(hotel.flow(), None);
        assert!(
            matches!(hotel, CheckError::Profile(ProfileError::UnknownProductType { index: 0, ref name }) if name == "HOTEL")
        );
    }
}

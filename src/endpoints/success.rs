//! The one success rule every command uses: any 2xx is the provider counting the call unless
//! the endpoint's `expect` says which statuses are. A success outside the status the spec
//! states is noted as a deviation, never failed.

use super::EndpointProblem;
use crate::models::Operation;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SuccessRule {
    expect: Option<Vec<u16>>,
    stated: &'static [u16],
}

/// The success statuses the spec states per operation (§4, §7); empty where it shows none.
pub(super) fn stated(op: Operation) -> &'static [u16] {
    match op {
        Operation::Subscription | Operation::Claim => &[201],
        Operation::Update => &[200, 201],
        Operation::Quote
        | Operation::ReadContracts
        | Operation::QuoteDeletion
        | Operation::FlightCancellation => &[],
    }
}

impl SuccessRule {
    /// `expect` as configured; each status must be an HTTP status (100–599).
    pub(crate) fn new(
        op: Operation,
        expect: Option<Vec<u16>>,
    ) -> Result<SuccessRule, EndpointProblem> {
        if let Some(list) = &expect {
            if list.is_empty() {
                return Err(EndpointProblem::EmptyExpect);
            }
            if let Some(&status) = list.iter().find(|s| !(100..=599).contains(*s)) {
                return Err(EndpointProblem::NotAStatus { status });
            }
        }
        Ok(SuccessRule {
            expect,
            stated: stated(op),
        })
    }

    /// The rule with no configuration: any 2xx.
    pub(crate) fn any_2xx(op: Operation) -> SuccessRule {
        SuccessRule {
            expect: None,
            stated: stated(op),
        }
    }

    pub(crate) fn accepts(&self, status: u16) -> bool {
        match &self.expect {
            Some(list) => list.contains(&status),
            None => (200..300).contains(&status),
        }
    }

    /// A success the spec states differently, as the exchange's `spec_status` warning: noted,
    /// never failed.
    pub(crate) fn deviation_check(&self, status: u16) -> Option<crate::record::Check> {
        self.deviation(status)
            .map(|detail| crate::record::Check::fail("spec_status", detail).warning())
    }

    /// A success the spec states differently: what to note in the evidence.
    pub(crate) fn deviation(&self, status: u16) -> Option<String> {
        (self.accepts(status) && !self.stated.is_empty() && !self.stated.contains(&status)).then(
            || {
                format!(
                    "HTTP {status} where the spec states {}; counted as success (the provider counted it)",
                    join(self.stated)
                )
            },
        )
    }

    /// The user's `expect` rule, when one is configured and refuses `status`: what a failure
    /// names, so a status the staging meant as success is seen to fail by the user's rule.
    pub(crate) fn refused_by_expect(&self, op: Operation, status: u16) -> Option<String> {
        let list = self.expect.as_ref()?;
        let codes: Vec<String> = list.iter().map(u16::to_string).collect();
        (!list.contains(&status))
            .then(|| format!("not in `[endpoints.{op}] expect = [{}]`", codes.join(", ")))
    }

    pub(crate) fn describe(&self) -> String {
        match &self.expect {
            Some(list) => join(list),
            None => "any 2xx".into(),
        }
    }
}

fn join(codes: &[u16]) -> String {
    codes
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_2xx_succeeds_and_a_deviation_from_the_spec_is_noted_not_failed() {
        let update = SuccessRule::any_2xx(Operation::Update);
        assert!(update.accepts(204) && update.accepts(200) && !update.accepts(301));
        assert!(update.deviation(204).unwrap().contains("200 or 201"));
        assert_eq!(update.deviation(200), None);
        assert_eq!(SuccessRule::any_2xx(Operation::Quote).deviation(202), None);
        let narrowed = SuccessRule::new(Operation::Claim, Some(vec![202])).unwrap();
        assert!(narrowed.accepts(202) && !narrowed.accepts(201));
        assert!(matches!(
            SuccessRule::new(Operation::Claim, Some(vec![])),
            Err(EndpointProblem::EmptyExpect)
        ));
        assert!(matches!(
            SuccessRule::new(Operation::Claim, Some(vec![1000])),
            Err(EndpointProblem::NotAStatus { status: 1000 })
        ));
    }
}

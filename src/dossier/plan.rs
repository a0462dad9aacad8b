//! What a `run --dossier` sends: of the scenario's flows, the fewest and shortest whose
//! repeats make what the dossier still lacks, and nothing else.

use std::collections::BTreeMap;

use crate::models::Operation;
use crate::scenario::{FlowSpec, Requirement, Scenario, Step};

/// The operations the rarer flows make are planned first: a lifecycle made for its claims
/// also makes quotes and subscriptions, which then need no flow of their own.
const ORDER: [Operation; 6] = [
    Operation::Claim,
    Operation::Update,
    Operation::QuoteDeletion,
    Operation::FlightCancellation,
    Operation::Subscription,
    Operation::Quote,
];

/// The counted operations one repeat of `flow` makes when every step succeeds.
fn yields(flow: &FlowSpec) -> BTreeMap<Operation, u32> {
    let mut made = BTreeMap::new();
    for step in &flow.steps {
        if matches!(step, Step::ExpectError { .. }) {
            continue; // a refusal is never counted
        }
        for operation in step.operations() {
            if operation != Operation::ReadContracts {
                *made.entry(operation).or_insert(0) += 1;
            }
        }
    }
    made
}

/// `scenario` cut down to what makes `missing` (operation, how many more): each flow kept
/// repeated just enough, its requirements what was missing. The operations no flow of the
/// scenario makes are returned apart.
pub(crate) fn reduce(
    scenario: &Scenario,
    missing: &[(Operation, u32)],
    flight_seller: bool,
) -> (Scenario, Vec<Operation>) {
    let mut need: BTreeMap<Operation, u32> = missing.iter().copied().collect();
    let made: Vec<BTreeMap<Operation, u32>> = scenario.flows.iter().map(yields).collect();
    let mut repeats = vec![0u32; scenario.flows.len()];
    let mut unmakeable = Vec::new();
    for operation in ORDER {
        let Some(&wanted) = need.get(&operation).filter(|n| **n > 0) else {
            continue;
        };
        let cheapest = (scenario.flows.iter().zip(&made).enumerate())
            .filter(|(_, (flow, _))| flight_seller || !flow.flight_sellers_only)
            .filter_map(|(i, (_, yields))| {
                let each = *yields.get(&operation)?;
                (each > 0).then(|| (yields.values().sum::<u32>(), i, each))
            })
            .min();
        let Some((_, index, each)) = cheapest else {
            unmakeable.push(operation);
            continue;
        };
        let times = wanted.div_ceil(each);
        repeats[index] += times;
        for (made_op, count) in &made[index] {
            if let Some(n) = need.get_mut(made_op) {
                *n = n.saturating_sub(count * times);
            }
        }
    }
    let flows = (scenario.flows.iter().zip(repeats))
        .filter(|(_, repeat)| *repeat > 0)
        .map(|(flow, repeat)| FlowSpec {
            repeat,
            ..flow.clone()
        })
        .collect();
    let wanted: Vec<String> = missing.iter().map(|(op, n)| format!("{n} {op}")).collect();
    let reduced = Scenario {
        name: scenario.name.clone(),
        description: format!("what the dossier still lacked: {}", wanted.join(", ")),
        data: scenario.data.clone(),
        requirements: (missing.iter())
            .filter(|(op, _)| !unmakeable.contains(op))
            .map(|(operation, required)| Requirement {
                operation: *operation,
                required: *required,
                flight_sellers_only: false,
            })
            .collect(),
        flows,
    };
    (reduced, unmakeable)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certification() -> Scenario {
        crate::scenario::builtin_named("certification")
            .unwrap()
            .scenario
    }

    fn planned(missing: &[(Operation, u32)]) -> Vec<(String, u32)> {
        let (reduced, unmakeable) = reduce(&certification(), missing, true);
        assert!(unmakeable.is_empty());
        reduced
            .flows
            .iter()
            .map(|f| (f.name.clone(), f.repeat))
            .collect()
    }

    #[test]
    fn only_the_flows_that_make_what_is_missing_are_run() {
        use Operation::*;
        assert_eq!(
            planned(&[(FlightCancellation, 3)]),
            vec![("flight-cancellation".to_string(), 3)]
        );
        // Claims need the lifecycle; its quotes and subscriptions cover those missing too.
        assert_eq!(
            planned(&[(Claim, 2), (Quote, 4), (Subscription, 2)]),
            vec![("lifecycle".to_string(), 2)]
        );
        // A lone quote: the shortest flow that makes one.
        assert_eq!(
            planned(&[(Quote, 1)]),
            vec![("quote-deletion".to_string(), 1)]
        );
        let (_, unmakeable) = reduce(&certification(), &[(FlightCancellation, 3)], false);
        assert_eq!(unmakeable, vec![FlightCancellation]);
    }
}

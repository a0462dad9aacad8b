//! The production guard: a scenario that would write contracts or claims in production is
//! refused before anything is sent.

use crate::config::{Environment, RunConfig};
use crate::error::Failure;
use crate::models::Operation;

/// Refuses, before anything is sent, a scenario that would write contracts or claims in production.
pub(crate) fn production_guard(config: &RunConfig) -> Result<(), Failure> {
    if config.environment() != Environment::Production {
        return Ok(());
    }
    // Judged by the requests the steps would send with the endpoints in force (an override
    // can make a read a write), refusal probes included: only quotes and reads may go.
    let endpoints = &config.staging.endpoints;
    let writes_in_production = |op: Operation| match op {
        // A quote is the one write production takes (the token check); pointed elsewhere by an
        // override, it is whatever that call is.
        Operation::Quote => {
            endpoints.method(op) != reqwest::Method::POST
                || endpoints.path_template(op) != "/quotes"
        }
        _ => endpoints.method(op) != reqwest::Method::GET,
    };
    let writes: Vec<String> = config
        .scenario
        .scenario
        .flows
        .iter()
        .flat_map(|f| {
            f.steps
                .iter()
                .filter(|s| s.operations().into_iter().any(writes_in_production))
                .map(move |s| format!("{} ({})", f.name, s.name()))
        })
        .collect();
    if writes.is_empty() {
        return Ok(());
    }
    Err(Failure::ProductionGuard(format!(
        "refused by the production guard: target.environment is \"production\" and scenario `{}` would write there: {}. Certify against staging; only scenarios that make quotes and read (such as `smoke`) may run against production.",
        config.scenario.scenario.name,
        writes.join(", ")
    )))
}

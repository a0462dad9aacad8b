//! `ppcert proxy --faults`: the plan read (and refused against production) before the proxy
//! listens, the proxy armed with it, and the faults graded into the evidence when it ends.

use std::path::Path;

use crate::config::ConfigError;
use crate::error::Failure;
use crate::proxy::Proxy;
use crate::proxy::faults::plan;
use crate::record::fault::{FaultRule, Which};

/// The plan `--faults` names, if any; refused against production, as the guard refuses writes.
pub(super) fn plan(
    given: Option<&str>,
    production: bool,
    forwarding: bool,
) -> Result<Option<Vec<FaultRule>>, Failure> {
    let Some(given) = given else {
        return Ok(None);
    };
    if production {
        return Err(Failure::ProductionGuard(
            "refusing --faults against production: faults are injected into staging traffic only (a lost answer or a 503 would reach real travellers); point the proxy at the staging".into(),
        ));
    }
    let rules = plan::load(given).map_err(ConfigError::Faults)?;
    let duplicates =
        (rules.iter()).any(|r| r.kind == crate::record::fault::FaultKind::DuplicateWebhook);
    if duplicates && !forwarding {
        return Err(ConfigError::Faults(crate::scenario::FileError {
            file: given.to_string(),
            line: None,
            message: "kind = \"duplicate_webhook\" needs --webhook-forward URL (your receiver): the staging then delivers to the proxy's /_ppcert/webhooks".into(),
        })
        .into());
    }
    Ok(Some(rules))
}

/// `proxy` injecting `faults`, and the console told which.
pub(super) fn armed(proxy: Proxy, faults: Option<&Vec<FaultRule>>) -> Proxy {
    let Some(faults) = faults else {
        return proxy;
    };
    for rule in faults {
        let which = match rule.which {
            Which::Nth(n) => format!("call {n}"),
            Which::Every(n) => format!("every call {n}"),
        };
        crate::console::tell!(
            "fault plan: {} on {} {which}",
            rule.kind.describe(),
            rule.operation
        );
    }
    proxy.with_faults(faults.clone())
}

/// The session's faults graded from its journal into `evidence` (its verdict too).
pub(super) fn grade(dir: &Path, evidence: &mut crate::evidence::Evidence) {
    let journal = dir.join(crate::journal::FILE_NAME);
    match crate::evidence::graded::grade_journal(&journal) {
        Ok(resilience) => {
            for fault in resilience.iter().flat_map(|r| &r.faults) {
                crate::console::tell!(
                    "resilience: {} {}{}: {} — {}",
                    fault.operation,
                    fault.kind.describe(),
                    fault
                        .call
                        .map(|c| format!(" (call {c})"))
                        .unwrap_or_default(),
                    fault.verdict.as_str(),
                    crate::console::printable(&fault.client_did)
                );
            }
            crate::evidence::graded::apply(evidence, resilience)
        }
        Err(e) => crate::console::tell!("error: cannot grade the faults from the journal: {e}"),
    }
}

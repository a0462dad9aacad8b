//! Issue 33's whole staging: stateful, asynchronous and particular at once (contracts listed
//! late, updates needing `If-Match`, claims decided after their answer, its own booking-number
//! shape, money in units and nanos), certified with a config taken only from the docs' pages.

use std::time::Duration;

use ppcert::sandbox::{DeltaShape, Layout, SandboxOptions};

use crate::common::*;

/// The booking numbers the living staging gives, as docs/claims-and-data.md's `[data]` says.
pub const PATTERN: &str = "[A-Z]{2}[0-9]{8}";

/// The living staging: contracts listed late, updates needing `If-Match`, claims decided after
/// their answer, its own booking numbers, money in units and nanos.
pub async fn living_sandbox() -> ppcert::sandbox::Sandbox {
    sandbox_with(SandboxOptions {
        contracts_delay: Some(Duration::from_millis(300)),
        require_if_match: true,
        claims_decided_after: Some(Duration::from_millis(400)),
        booking_number_pattern: Some(PATTERN.into()),
        layout: Layout {
            price_delta: DeltaShape::UnitsNanos,
            ..Layout::default()
        },
        ..fast_options()
    })
    .await
}

/// A folder holding docs/flows.md's `scenarios/conditional.toml`, as the page shows it.
pub fn dir_with_docs_scenario(flows: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scenarios")).unwrap();
    std::fs::write(
        dir.path().join("scenarios/conditional.toml"),
        toml_block(flows, "# scenarios/conditional.toml"),
    )
    .unwrap();
    dir
}

/// docs/flows.md's `ppcert.toml` with docs/claims-and-data.md's `[data]`, as the pages show them.
pub fn living_config(flows: &str) -> String {
    let data = include_str!("../../docs/claims-and-data.md");
    format!(
        "{}\n{}",
        toml_block(flows, "# ppcert.toml"),
        toml_block(data, "[data]")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staging_with_all_five_behaviours_is_certified_from_the_docs_alone() {
    let flows = include_str!("../../docs/flows.md");
    let pattern = PATTERN;
    let sandbox = living_sandbox().await;
    let config = living_config(flows);
    let dir = dir_with_docs_scenario(flows);
    let run = Run::against(&sandbox)
        .config(&config)
        .scenario("scenarios/conditional.toml")
        .args(&["--backoff-ms", "1"]);
    let (finished, evidence) = run.evidence_in(dir.path()).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert_eq!(evidence["verdict"], "passed");
    assert!(every_requirement_met(&evidence));
    ledger_equals(&evidence, &sandbox);
    let shape = regex::Regex::new(&format!("^{pattern}$")).unwrap();
    let numbers: Vec<&str> = evidence["bookings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["booking_number"].as_str())
        .collect();
    assert!(!numbers.is_empty(), "{}", evidence["bookings"]);
    assert!(numbers.iter().all(|n| shape.is_match(n)), "{numbers:?}");
}

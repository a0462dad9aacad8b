//! A claim whose status never showed to the built-in reading fails as unconfirmed, pointing
//! at the `claim_status` capture that would say where the staging writes it.

use std::time::Duration;

use ppcert::sandbox::SandboxOptions;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unconfirmed_claim_points_at_the_claim_status_capture() {
    let sandbox = sandbox_with(SandboxOptions {
        claims_decided_after: Some(Duration::from_secs(600)),
        ..fast_options()
    })
    .await;
    let config = "[endpoints.claim.confirm]\nevery = \"100ms\"\ntimeout = \"500ms\"\n";
    let (finished, _dir) = Run::against(&sandbox)
        .config(config)
        .args(&["--backoff-ms", "1"])
        .finish()
        .await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    let said = format!("{}{}", finished.stdout, finished.stderr);
    assert!(said.contains("claim status unconfirmed"), "{said}");
    assert!(
        said.contains("`[endpoints.read_contracts.capture] claim_status = \"$...\"`"),
        "{said}"
    );
    // With a capture of its own, the hint is about time, not about where.
    let captured = format!(
        "{config}\n[endpoints.read_contracts.capture]\nclaim_status = \"$.data.{{{{ product_type }}}}[0].claim.state\"\n"
    );
    let (finished, _dir) = Run::against(&sandbox)
        .config(&captured)
        .args(&["--backoff-ms", "1"])
        .finish()
        .await;
    let said = format!("{}{}", finished.stdout, finished.stderr);
    assert!(
        said.contains("the configured `claim_status` capture found none"),
        "{said}"
    );
}

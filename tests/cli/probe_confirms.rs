//! `ppcert probe` confirms its claim and reads a new booking's contracts through the run's own
//! machinery: a claim decided after its answer is read with the configured `claim_status`
//! capture for `[endpoints.claim.confirm]`'s time, and a booking whose contracts are listed
//! late is waited for as `run` waits, with no setting.

use std::sync::Arc;
use std::time::Duration;

use ppcert::sandbox::SandboxOptions;
use serde_json::Value;

use crate::common::*;
use crate::hostile::{Action, Rule, front};
use crate::probe_run::probe_then_certify;

/// Every claim's `status` renamed `state`: where only a configured capture finds it.
fn claim_state(_: &str, mut body: Value) -> (crate::hostile::Headers, Value) {
    fn rename(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(claim)) = map.get_mut("claim")
                    && let Some(status) = claim.remove("status")
                {
                    claim.insert("state".into(), status);
                }
                map.values_mut().for_each(rename);
            }
            Value::Array(items) => items.iter_mut().for_each(rename),
            _ => {}
        }
    }
    rename(&mut body);
    (vec![], body)
}

/// A staging that decides claims 1.5 s after answering them and writes their status as
/// `claim.state` in the contracts: the sandbox behind a front that renames it.
async fn late_claims_written_elsewhere() -> (ppcert::sandbox::Sandbox, String) {
    let sandbox = sandbox_with(SandboxOptions {
        claims_decided_after: Some(Duration::from_millis(1500)),
        ..fast_options()
    })
    .await;
    let rule: Rule = Arc::new(|method, path, _| match (method.as_str(), path) {
        ("GET", "/subscriptions/*/contracts") => Action::Rewrite(claim_state),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    (sandbox, base)
}

/// The claim's confirmation read with its own `claim_status` capture, for `timeout`.
fn confirm_config(timeout: &str) -> String {
    format!(
        "[endpoints.claim.confirm]\nevery = \"200ms\"\ntimeout = \"{timeout}\"\n\n\
         [endpoints.claim.confirm.capture]\n\
         claim_status = \"$.data.{{{{ product_type }}}}[0].claim.state\"\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_confirms_a_late_claim_with_the_configured_capture_and_bounds_as_run_does() {
    let (sandbox, base) = late_claims_written_elsewhere().await;
    let dir = tempfile::tempdir().unwrap();
    let config = confirm_config("6s");
    let (probed, _) = probe_then_certify(&sandbox, &base, dir.path(), &config, &[]).await;
    assert_eq!(probed.code, 0, "{}\n{}", probed.stdout, probed.stderr);
    let claim = (probed.stdout.lines())
        .find(|l| l.contains(" claim: "))
        .unwrap_or_default();
    assert!(claim.starts_with("ok"), "{}", probed.stdout);
    assert!(
        probed.stdout.contains("confirmed as `run` confirms it"),
        "{}",
        probed.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_leaves_a_claim_unconfirmed_within_the_configured_timeout_as_run_does() {
    let (sandbox, base) = late_claims_written_elsewhere().await;
    let config = confirm_config("400ms");
    let dir = dir_with_config(&config);
    let args = ["probe", "--config", "ppcert.toml", "--base-url", &base];
    let probed = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(probed.code, 1, "{}\n{}", probed.stdout, probed.stderr);
    let said = format!("{}{}", probed.stdout, probed.stderr);
    assert!(said.contains("claim status unconfirmed"), "{said}");
    assert!(said.contains("over 0.4 s"), "{said}");
    assert!(
        said.contains("the configured `claim_status` capture found none"),
        "{said}"
    );
    let args = run_args(
        &base,
        "b",
        &["--backoff-ms", "1", "--config", "ppcert.toml"],
    );
    let ran = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(ran.code, 1, "{}\n{}", ran.stdout, ran.stderr);
    let said = format!("{}{}", ran.stdout, ran.stderr);
    assert!(said.contains("claim status unconfirmed"), "{said}");
    assert!(said.contains("over 0.4 s"), "{said}");
    assert!(
        said.contains("the configured `claim_status` capture found none"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_waits_for_a_new_bookings_contracts_as_run_does() {
    let sandbox = sandbox_with(SandboxOptions {
        contracts_delay: Some(Duration::from_millis(1500)),
        ..fast_options()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let base = sandbox.base_url();
    let (probed, _) = probe_then_certify(&sandbox, &base, dir.path(), "", &[]).await;
    assert_eq!(probed.code, 0, "{}\n{}", probed.stdout, probed.stderr);
    let claim = (probed.stdout.lines())
        .find(|l| l.contains(" claim: "))
        .unwrap_or_default();
    assert!(claim.starts_with("ok"), "{}", probed.stdout);
}

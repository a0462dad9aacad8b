//! One staging model: a staging that needs a header, answers 204 and 202, names a new
//! contract only in `Location` and rate-limits with `RateLimit-Reset` is certified by
//! configuration alone; `probe` writes a configuration that passes there and never calls
//! "ready" what `run` fails; templates are strict everywhere.

use std::sync::Arc;

use chrono::DateTime;
use ppcert::sandbox::{Layout, QuoteWrapper, RateLimitHeader, Sandbox, SandboxOptions};
use serde_json::Value;

use crate::common::*;
use crate::hostile::{Action, Rule, front};

/// The staging of the issue: idempotency keys required on subscriptions and claims, 204
/// updates, 202 claims, contract ids only in `Location`, 429s announcing `RateLimit-Reset`.
fn demanding(layout: Layout) -> SandboxOptions {
    SandboxOptions {
        require_idempotency_key: true,
        rate_limit_every: Some(9),
        rate_limit_header: RateLimitHeader::RateLimitReset,
        retry_after_secs: 1,
        layout: Layout {
            update_status: 204,
            claim_status: 202,
            location_ids: true,
            ..layout
        },
        ..fast_options()
    }
}

const HEADERS: &str = r#"
[endpoints.subscription.headers]
Idempotency-Key = "{{ idempotency_key }}"

[endpoints.claim.headers]
Idempotency-Key = "{{ idempotency_key }}"
"#;

const LOCATION: &str = r#"
[endpoints.subscription.capture]
contract_id = { header = "Location", pattern = "/contracts/([^/]+)$" }
"#;

async fn certify(sandbox: &Sandbox, dir: &std::path::Path, extra: &[&str]) -> (Finished, Value) {
    let run = Run::against(sandbox)
        .args(&["--backoff-ms", "1"])
        .args(extra);
    run.evidence_in(dir).await
}

fn exchanges(evidence: &Value) -> &Vec<Value> {
    evidence["exchanges"].as_array().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_demanding_staging_is_certified_by_configuration_alone() {
    let sandbox = sandbox_with(demanding(Layout::default())).await;
    let dir = dir_with_config(&format!("{HEADERS}{LOCATION}"));
    let (finished, evidence) = certify(&sandbox, dir.path(), &[]).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(every_requirement_met(&evidence));
    ledger_equals(&evidence, &sandbox);
    let all = exchanges(&evidence);
    let keyed = all
        .iter()
        .filter(|e| e["operation"] == "subscription" || e["operation"] == "claim")
        .all(|e| {
            e["request"]["headers"]["idempotency-key"]
                .as_str()
                .is_some()
        });
    assert!(keyed, "every subscription and claim carries its key");
    let from_location = all.iter().any(|e| {
        e["operation"] == "subscription"
            && e["reads"].as_array().is_some_and(|reads| {
                reads.iter().any(|r| {
                    r["name"] == "contract_id"
                        && r["from"].as_str().unwrap().contains("header Location")
                        && r["value"].as_str().is_some()
                })
            })
    });
    assert!(from_location, "the contract id was read from Location");
    let noted = |status: u64| {
        all.iter().any(|e| {
            e["response"]["status"] == status
                && e["outcome"] == "passed"
                && e["checks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c["name"] == "spec_status" && c["warning"] == true)
        })
    };
    assert!(
        noted(204) && noted(202),
        "204 and 202 pass, noted as deviations"
    );
    assert_rate_limits_were_waited_out(all);
}

/// Every retry after a 429 that announced `RateLimit-Reset: 1` came a second later or more.
fn assert_rate_limits_were_waited_out(all: &[Value]) {
    let started =
        |e: &Value| DateTime::parse_from_rfc3339(e["started_at"].as_str().unwrap()).unwrap();
    let limited: Vec<&Value> = all
        .iter()
        .filter(|e| e["response"]["status"] == 429)
        .collect();
    assert!(!limited.is_empty(), "the staging rate-limited some calls");
    for hit in limited {
        let retry = all
            .iter()
            .find(|e| {
                e["flow"] == hit["flow"]
                    && e["step"] == hit["step"]
                    && e["attempt"].as_u64() == hit["attempt"].as_u64().map(|a| a + 1)
            })
            .expect("the call was retried");
        let waited = started(retry) - started(hit);
        assert!(
            waited >= chrono::Duration::milliseconds(950),
            "retried {} ms after a 429 announcing 1 s",
            waited.num_milliseconds()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_header_the_staging_refuses_and_the_ledger_still_equals_its_count() {
    let sandbox = sandbox_with(demanding(Layout::default())).await;
    let dir = tempfile::tempdir().unwrap();
    let (finished, evidence) = certify(&sandbox, dir.path(), &[]).await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    assert!(
        finished.stdout.contains("IDEMPOTENCY_KEY_REQUIRED"),
        "{}",
        finished.stdout
    );
    ledger_equals(&evidence, &sandbox);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_answer_is_retried_with_the_same_key_and_counted_once() {
    let options = SandboxOptions {
        // With one flow at a time, every second POST loses its answer and its retry (the
        // next POST) gets one: each write is lost once at most, and keyed ones are among them.
        drop_every: Some(2),
        rate_limit_every: None,
        ..demanding(Layout::default())
    };
    let sandbox = sandbox_with(options).await;
    let dir = dir_with_config(&format!("{HEADERS}{LOCATION}"));
    let (finished, evidence) = certify(&sandbox, dir.path(), &["--concurrency", "1"]).await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
    ledger_equals_since(&evidence, &sandbox, &Default::default(), true);
    let all = exchanges(&evidence);
    let lost_keyed: Vec<&Value> = all
        .iter()
        .filter(|e| {
            e["maybe_processed"] == true
                && (e["operation"] == "subscription" || e["operation"] == "claim")
        })
        .collect();
    assert!(!lost_keyed.is_empty(), "some keyed write lost its answer");
    for lost in lost_keyed {
        let key = &lost["request"]["headers"]["idempotency-key"];
        let later = all.iter().filter(|e| {
            e["flow"] == lost["flow"]
                && e["step"] == lost["step"]
                && e["operation"] == lost["operation"]
                && e["attempt"].as_u64() > lost["attempt"].as_u64()
        });
        let mut retry = None;
        for attempt in later {
            assert_eq!(
                &attempt["request"]["headers"]["idempotency-key"], key,
                "same key"
            );
            retry = Some(attempt);
        }
        let retry = retry.expect("retried");
        if retry["maybe_processed"] == true {
            continue; // its own lost answer is judged by the attempt after it
        }
        assert_eq!(retry["outcome"], "passed", "{retry}");
        let said = retry["checks"].as_array().unwrap().iter().any(|c| {
            c["name"] == "reconciled" && c["detail"].as_str().unwrap().contains("idempotency key")
        });
        assert!(
            said,
            "the evidence says which reconciliation was used: {retry}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_writes_a_config_that_passes_where_only_headers_were_given() {
    let sandbox = sandbox_with(demanding(Layout {
        quote_wrapper: QuoteWrapper::ResultQuote,
        ..Layout::default()
    }))
    .await;
    let dir = dir_with_config(HEADERS);
    let base = sandbox.base_url();
    let write_config = [
        "probe",
        "--base-url",
        &base,
        "--write-config",
        "proven.toml",
    ];
    let probe = ppcert(dir.path(), &write_config, Some(sandbox.token())).await;
    assert_eq!(probe.code, 0, "{}\n{}", probe.stdout, probe.stderr);
    assert!(
        probe.stdout.contains("this configuration is ready"),
        "{}",
        probe.stdout
    );
    let written = std::fs::read_to_string(dir.path().join("proven.toml")).unwrap();
    assert!(written.contains("Idempotency-Key"), "{written}");
    let before = sandbox_counts(&sandbox);
    let (finished, evidence) = certify(&sandbox, dir.path(), &["--config", "proven.toml"]).await;
    assert_eq!(finished.code, 0, "{written}\n{}", finished.stdout);
    ledger_equals_since(&evidence, &sandbox, &before, false);
    let again = ppcert(dir.path(), &write_config, Some(sandbox.token())).await;
    assert_ne!(
        again.code, 0,
        "an existing file is not replaced without --force"
    );
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_never_calls_ready_what_run_fails() {
    let sandbox = sandbox_with(SandboxOptions { ..fast_options() }).await;
    let error = r#"{"error": {"code": "NOT_UPDATED", "message": "the update was not applied"}}"#;
    let rule: Rule = Arc::new(move |method, _, _| match method.as_str() {
        "PATCH" => Action::Answer(200, vec![], error.to_string()),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let dir = tempfile::tempdir().unwrap();
    let probe = ppcert(
        dir.path(),
        &["probe", "--base-url", &base],
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(probe.code, 1, "{}", probe.stdout);
    assert!(!probe.stdout.contains("is ready"), "{}", probe.stdout);
    assert!(probe.stdout.contains("NOT_UPDATED"), "{}", probe.stdout);
    let args = run_args(&base, "b", &["--backoff-ms", "1"]);
    let run = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(run.code, 1, "run fails the same call: {}", run.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misspelt_attribute_is_exit_2_before_anything_is_sent_for_every_command() {
    let sandbox = sandbox().await;
    let config = r#"
[endpoints.flight_cancellation]
body = '''{"data": {"airlineIata": {{ flight.airline_iata | tojson }}}}'''
"#;
    let dir = dir_with_config(config);
    let base = sandbox.base_url();
    let validate = ppcert(dir.path(), &["validate"], None).await;
    assert_eq!(validate.code, 2, "{}", validate.stdout);
    for needle in [
        "ppcert.toml:3",
        "endpoints.flight_cancellation",
        "body",
        "flight.airline_iata",
    ] {
        assert!(
            validate.stderr.contains(needle),
            "{needle}: {}",
            validate.stderr
        );
    }
    for args in [
        run_args(&base, "b", &[]),
        vec!["probe", "--base-url", &base],
        vec!["check-token", "--base-url", &base],
    ] {
        let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
        assert_eq!(finished.code, 2, "{args:?}: {}", finished.stderr);
        assert!(
            finished.stderr.contains("flight.airline_iata"),
            "{}",
            finished.stderr
        );
    }
    // Every request that reached the sandbox, refused ones included.
    assert_eq!(sandbox.requests_received(), 0, "nothing was sent");
}

#[tokio::test]
async fn headers_ppcert_sets_itself_cannot_be_configured() {
    // Content-Type and Accept may be set (docs/transport.md "Media types"); these may not.
    for header in ["Authorization", "Host"] {
        let dir = dir_with_config(&format!("[endpoints.quote.headers]\n{header} = \"x\"\n"));
        let validate = ppcert(dir.path(), &["validate"], None).await;
        assert_eq!(validate.code, 2, "{header}");
        assert!(validate.stderr.contains(header), "{}", validate.stderr);
        assert!(
            validate.stderr.contains("ppcert.toml:2"),
            "{}",
            validate.stderr
        );
    }
}

/// A scenario may drop the contracts read where the subscription's answer already named the
/// contract (here by `Location`): the claim goes a round trip sooner. The default keeps the
/// spec's two-step cancellation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scenario_may_skip_a_read_whose_value_is_already_known() {
    let sandbox = sandbox_with(SandboxOptions {
        rate_limit_every: None,
        ..demanding(Layout::default())
    })
    .await;
    let scenario = r#"
name = "short-chain"
description = "claims on contracts named by the subscription's Location"
[[requirements]]
operation = "claim"
required = 2
[[flows]]
name = "lifecycle"
repeat = 2
steps = [
  { action = "quote" },
  { action = "subscribe" },
  { action = "read_contracts", when_unknown = true },
  { action = "claim" },
]
"#;
    let dir = dir_with_config(&format!("{HEADERS}{LOCATION}"));
    std::fs::write(dir.path().join("short.toml"), scenario).unwrap();
    let (finished, evidence) = certify(&sandbox, dir.path(), &["--scenario", "short.toml"]).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    ledger_equals(&evidence, &sandbox);
    let reads = exchanges(&evidence)
        .iter()
        .filter(|e| e["operation"] == "read_contracts")
        .count();
    assert_eq!(reads, 0, "the contract ids were known from Location");
    let again = dir.path().join("default-run");
    std::fs::create_dir(&again).unwrap();
    std::fs::copy(dir.path().join("ppcert.toml"), again.join("ppcert.toml")).unwrap();
    let (finished, evidence) = certify(&sandbox, &again, &[]).await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
    assert!(
        exchanges(&evidence)
            .iter()
            .any(|e| e["operation"] == "read_contracts"),
        "the certification batch keeps the spec's read before each claim"
    );
}

/// A configured header may carry a gateway key: its value reaches the staging but no file of
/// the bundle. And every call gets the context `validate` rehearsed: a contracts read names
/// its product type, a claim (the conformance batch's refusals included) its claim day.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_values_stay_out_of_the_evidence_and_every_call_has_its_context() {
    let sandbox = sandbox_with(fast_options()).await;
    let key = "sk_live_gateway_secret_0123456789";
    let config = format!(
        "[endpoints.subscription.headers]\nX-Api-Key = \"{key}\"\n\n\
         [endpoints.read_contracts]\n\
         path = \"/subscriptions/{{{{ booking.number }}}}/contracts?productType={{{{ product_type }}}}\"\n\n\
         [endpoints.claim]\n\
         body = '{{\"data\": {{\"claimDate\": {{{{ claim_day | tojson }}}}}}}}'\n"
    );
    for scenario in ["certification", "conformance"] {
        let dir = dir_with_config(&config);
        let validate = ppcert(dir.path(), &["validate"], None).await;
        assert_eq!(validate.code, 0, "{}", validate.stderr);
        let (finished, _evidence) = certify(&sandbox, dir.path(), &["--scenario", scenario]).await;
        assert_eq!(
            finished.code, 0,
            "{scenario}: {}\n{}",
            finished.stdout, finished.stderr
        );
        for entry in std::fs::read_dir(dir.path().join("b")).unwrap() {
            let path = entry.unwrap().path();
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            assert!(
                !text.contains(key),
                "{} holds the header's value",
                path.display()
            );
        }
    }
}

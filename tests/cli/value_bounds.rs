//! Values a staging or a user gives are bounded: a huge id from the staging fails its step
//! (the run still ends with its bundle and a journal `--resume` takes), a booking-number
//! pattern that could never be drawn from is refused before anything is sent, and money
//! arithmetic a staging can push past its range is a failed check, never a crash.

use std::sync::Arc;

use ppcert::sandbox::SandboxOptions;
use serde_json::{Value, json};

use crate::common::*;
use crate::hostile::{Action, Rule, front};

fn options(token: &str) -> SandboxOptions {
    SandboxOptions {
        token: token.to_string(),
        ..fast_options()
    }
}

/// `name` set to `value` where the answer keeps its fields (under `data` when it has one).
fn set(body: &mut Value, name: &str, value: Value) {
    match body.get_mut("data") {
        Some(data) if data.is_object() => data[name] = value,
        _ => body[name] = value,
    }
}

/// Before, a 4 MB quote id went on into every later URL, body and record (a 1.2 GB bundle);
/// a 14 MB one ended the run with exit 6, no bundle and a journal `--resume` refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_id_from_the_staging_fails_its_step_and_the_run_keeps_its_bundle() {
    let sandbox = sandbox_with(options("tok-huge-id-123")).await;
    let rule: Rule = Arc::new(|method, path, count| match (method.as_str(), path, count) {
        ("POST", "/quotes", 0) => Action::Rewrite(|_, mut body| {
            set(&mut body, "id", json!("Q".repeat(4 << 20)));
            (vec![], body)
        }),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let dir = tempfile::tempdir().unwrap();
    let args = run_args(&base, "b", &["--backoff-ms", "1", "--concurrency", "2"]);
    let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished
            .stdout
            .contains("is 4194304 bytes, larger than 64 KiB"),
        "{}",
        finished.stdout
    );
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "failed");
    let journal = std::fs::metadata(dir.path().join("b/journal.jsonl")).unwrap();
    assert!(
        journal.len() < 2 << 20,
        "journal of {} bytes",
        journal.len()
    );
    let resumed = ppcert(
        dir.path(),
        &["run", "--resume", "b", "--base-url", &base],
        Some(sandbox.token()),
    )
    .await;
    assert_ne!(resumed.code, 2, "{}", resumed.stderr);
    assert_ne!(resumed.code, 6, "{}", resumed.stderr);
}

/// Every `priceDelta` in the answer replaced by `value`.
fn replace_delta(body: &mut Value, value: &Value) {
    match body {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if key == "priceDelta" {
                    *inner = value.clone();
                } else {
                    replace_delta(inner, value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_delta(v, value)),
        _ => {}
    }
}

/// A booking of two flight plans, quoted, subscribed and updated once.
const TWO_PLAN_UPDATE: &str = r#"name = "two-plan-update"
description = "two plans, one update"

[data]
flight_plans = 2
max_travelers = 1
currency = "EUR"

[[flows]]
name = "update"
repeat = 1
steps = [
  { action = "quote" },
  { action = "subscribe" },
  { action = "update" },
]
"#;

async fn run_two_plan_update(rewrite: crate::hostile::Rewriter) -> Finished {
    let sandbox = sandbox_with(options("tok-delta-12345")).await;
    let rule: Rule = Arc::new(move |method, path, _| match (method.as_str(), path) {
        ("POST", "/quotes") => Action::Rewrite(rewrite),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("two.toml"), TWO_PLAN_UPDATE).unwrap();
    let args = run_args(&base, "b", &["--backoff-ms", "1", "--scenario", "two.toml"]);
    let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "failed", "{}", finished.stdout);
    finished
}

/// Before, the update's two deltas were added unchecked: 5e28 + 5e28 panicked the flow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_price_delta_sum_past_the_decimal_range_is_a_failed_check_not_a_panic() {
    let finished = run_two_plan_update(|_, mut body| {
        if body.to_string().contains("priceDelta") {
            replace_delta(&mut body, &json!("50000000000000000000000000000"));
        }
        (vec![], body)
    })
    .await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished.stdout.contains("price_delta_total")
            && finished
                .stdout
                .contains("past the range of exact decimal amounts"),
        "{}",
        finished.stdout
    );
    assert!(!finished.stderr.contains("panicked"), "{}", finished.stderr);
}

/// Before, a delta in yen on a quote in euros passed unnoticed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_price_delta_in_another_currency_than_the_quote_is_a_failed_check() {
    let finished = run_two_plan_update(|_, mut body| {
        if body.to_string().contains("priceDelta") {
            replace_delta(&mut body, &json!({"amount": "-1.50", "currency": "JPY"}));
        }
        (vec![], body)
    })
    .await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished
            .stdout
            .contains("priceDelta is in JPY, the quote in EUR"),
        "{}",
        finished.stdout
    );
}

/// Before, `[A-Z]{100000000}` passed `validate` and `run` hung drawing it; a pattern giving a
/// control character passed too, and one too narrow for the batch passed `validate`.
#[tokio::test]
async fn a_booking_number_pattern_past_its_bounds_is_exit_2_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let smoke = include_str!("../../scenarios/smoke.toml");
    for (pattern, said) in [
        (
            "[A-Z]{100000000}",
            "of 100000000 characters; ppcert's bound is 64",
        ),
        ("PP[A-Z]{80}", "of 82 characters"),
        ("PP[\\\\x00-\\\\x1f][0-9]{6}", "control character"),
        ("PP-[0-9]", "gives at most 10 distinct booking numbers"),
    ] {
        let config = format!("[target]\n\n[data]\nbooking_number_pattern = \"{pattern}\"\n");
        std::fs::write(dir.path().join("ppcert.toml"), &config).unwrap();
        let started = std::time::Instant::now();
        let validated = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
        let said_all = format!("{}{}", validated.stdout, validated.stderr);
        assert_eq!(validated.code, 2, "{pattern}: {said_all}");
        assert!(
            said_all.contains("ppcert.toml:4: data.booking_number_pattern: ")
                && said_all.contains(said),
            "{pattern}: {said_all}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        // A scenario's own pattern, checked against the scenario's bookings.
        let scenario = format!("{smoke}\n[data]\nbooking_number_pattern = \"{pattern}\"\n");
        std::fs::write(dir.path().join("mine.toml"), &scenario).unwrap();
        let line = scenario.lines().count();
        let validated = ppcert(dir.path(), &["validate", "mine.toml"], None).await;
        let said_all = format!("{}{}", validated.stdout, validated.stderr);
        if pattern == "PP-[0-9]" {
            // Ten numbers are enough for the smoke scenario's bookings.
            assert_eq!(validated.code, 0, "{said_all}");
            continue;
        }
        assert_eq!(validated.code, 2, "{pattern}: {said_all}");
        assert!(
            said_all.contains(&format!("mine.toml:{line}: data.booking_number_pattern: ")),
            "{pattern}: {said_all}"
        );
    }
    // `run` refuses the bomb as `validate` does, before anything is sent.
    std::fs::write(
        dir.path().join("ppcert.toml"),
        "[data]\nbooking_number_pattern = \"[A-Z]{100000000}\"\n",
    )
    .unwrap();
    let ran = ppcert(dir.path(), &["run", "--out", "o", "--no-progress"], None).await;
    assert_eq!(ran.code, 2, "{}{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains("ppcert's bound is 64"),
        "{}",
        ran.stderr
    );
}

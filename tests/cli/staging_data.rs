//! Data the staging accepts: booking numbers drawn from `[data] booking_number_pattern`
//! (unique, reproducible by seed, refused when broken or too narrow), and money in parts
//! (`{currencyCode, units, nanos}`) read exactly.

use ppcert::sandbox::{DeltaShape, Layout, SandboxOptions};
use serde_json::Value;

use crate::common::*;
use crate::confirmed_claims::certify;

const PATTERN: &str = "[A-Z]{2}[0-9]{8}";

fn booking_numbers(evidence: &Value) -> Vec<String> {
    let mut numbers: Vec<String> = evidence["bookings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["booking_number"].as_str().unwrap().to_string())
        .collect();
    numbers.sort();
    numbers
}

/// A staging that refuses any other booking-number shape is certified with the pattern, and
/// the same seed draws the same numbers again (against a fresh staging).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn booking_numbers_follow_the_pattern_and_the_seed() {
    let options = || SandboxOptions {
        booking_number_pattern: Some(PATTERN.into()),
        ..fast_options()
    };
    let config = format!("[data]\nbooking_number_pattern = \"{PATTERN}\"\n");
    let whole = regex::Regex::new(&format!("^{PATTERN}$")).unwrap();
    let mut drawn = Vec::new();
    for _ in 0..2 {
        let (_sandbox, finished, evidence, _dir) =
            certify(options(), &config, &["--seed", "42"]).await;
        assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
        let numbers = booking_numbers(&evidence);
        assert_eq!(numbers.len(), 13, "one per flow instance: {numbers:?}");
        assert!(numbers.iter().all(|n| whole.is_match(n)), "{numbers:?}");
        let unique: std::collections::BTreeSet<_> = numbers.iter().collect();
        assert_eq!(unique.len(), numbers.len(), "unique: {numbers:?}");
        // The numbers the evidence lists are the ones sent.
        let sent = evidence["exchanges"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["request"]["body"]["data"]["bookingNumber"].as_str())
            .all(|n| numbers.iter().any(|m| m == n));
        assert!(sent);
        drawn.push(numbers);
    }
    assert_eq!(drawn[0], drawn[1], "same seed, same numbers");

    // Without the pattern, the staging refuses ppcert's own numbers: the option is enforced.
    let sandbox = sandbox_with(options()).await;
    let (finished, _evidence, _dir) = Run::against(&sandbox)
        .args(&["--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_or_too_narrow_pattern_is_exit_2_naming_file_and_key() {
    for (pattern, says) in [("[A-Z", "booking_number_pattern"), ("A[0-9]", "distinct")] {
        let config =
            format!("[run]\nretries = 1\n[data]\nbooking_number_pattern = \"{pattern}\"\n");
        let (finished, _dir) = Run::embedded().config(&config).finish().await;
        assert_eq!(finished.code, 2, "{pattern}: {}", finished.stderr);
        assert!(
            finished.stderr.contains("ppcert.toml")
                && finished.stderr.contains("data.booking_number_pattern")
                && finished.stderr.contains(says),
            "{pattern}: {}",
            finished.stderr
        );
    }
}

/// `priceDelta` and prices as `{currencyCode, units, nanos}`: the run reads every delta whole,
/// its sign checked, with no capture configured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn money_in_units_and_nanos_is_read_exactly() {
    let options = SandboxOptions {
        layout: Layout {
            price_delta: DeltaShape::UnitsNanos,
            ..Layout::default()
        },
        ..fast_options()
    };
    let (_sandbox, finished, evidence, _dir) = certify(options, "", &[]).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let exchanges = evidence["exchanges"].as_array().unwrap();
    let mut compared = 0;
    for exchange in exchanges {
        let delta = &exchange["response"]["body"]["data"]["priceDelta"];
        if delta.is_null() {
            continue;
        }
        let units: i64 = delta["units"].as_str().unwrap().parse().unwrap();
        let nanos = delta["nanos"].as_i64().unwrap();
        let read = exchange["reads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "price_delta")
            .expect("price_delta read");
        let whole: Value = serde_json::from_str(read["value"].as_str().unwrap()).unwrap();
        assert_eq!(&whole, delta, "the whole amount is read, not its units");
        let check = exchange["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "price_delta_sign");
        if let Some(check) = check {
            let cents = units * 100 + nanos / 10_000_000;
            let shown = check["detail"].as_str().unwrap();
            // The amount as the check prints it (`-34.5`, `12`, `0.77`), in cents.
            let printed = shown
                .split("priceDelta ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or_default();
            let printed_cents = (printed.parse::<f64>().unwrap() * 100.0).round() as i64;
            assert_eq!(printed_cents, cents, "{shown} vs {cents} cents");
            compared += 1;
        }
    }
    assert!(compared >= 5, "{compared} deltas compared");
}

/// The three behaviours at once (claims decided later, the staging's booking numbers, money in
/// parts), with the one line of configuration the docs give: certified, counts the staging's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staging_with_every_behaviour_on_is_certified_from_the_docs() {
    let options = SandboxOptions {
        claims_decided_after: Some(std::time::Duration::from_millis(800)),
        booking_number_pattern: Some(PATTERN.into()),
        layout: Layout {
            price_delta: DeltaShape::UnitsNanos,
            ..Layout::default()
        },
        ..fast_options()
    };
    let config = format!("[data]\nbooking_number_pattern = \"{PATTERN}\"\n");
    let (sandbox, finished, evidence, _dir) = certify(options, &config, &[]).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(every_requirement_met(&evidence));
    ledger_equals(&evidence, &sandbox);
}

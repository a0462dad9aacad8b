//! A success after a lost answer, on a staging that ignores idempotency keys and takes
//! booking numbers in its own shape: the evidence says what the success proves and counts what
//! the staging holds. A lost quote's retry makes a second quote, which the ledger keeps apart
//! as unconfirmed, as its check says; a lost subscription's retry cannot make a second
//! booking (the staging refuses a booking number twice), so it is counted once. The staging is
//! a front on the sandbox that does the first write of each kind and answers 500.

use std::sync::Arc;

use ppcert::sandbox::SandboxOptions;

use crate::common::*;
use crate::hostile::{Action, Rule, front};

const CONFIG: &str = "[data]\nbooking_number_pattern = \"[A-Z]{2}[0-9]{8}\"\n\n\
                      [endpoints.quote.headers]\nIdempotency-Key = \"{{ idempotency_key }}\"\n\n\
                      [endpoints.subscription.headers]\nIdempotency-Key = \"{{ idempotency_key }}\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_after_a_lost_answer_claims_no_more_than_the_staging_shows() {
    let sandbox = sandbox_with(SandboxOptions {
        booking_number_pattern: Some("[A-Z]{2}[0-9]{8}".into()),
        ..fast_options()
    })
    .await;
    let rule: Rule = Arc::new(|method, path, count| match (method.as_str(), path, count) {
        ("POST", "/quotes" | "/subscriptions", 0) => Action::ForwardThen(500),
        _ => Action::Forward,
    });
    let base = front(&sandbox, rule).await;
    let (finished, evidence, _dir) = Run::at(&base, sandbox.token())
        .config(CONFIG)
        .args(&["--concurrency", "1", "--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    // Quotes within succeeded + unconfirmed, every other write exactly.
    ledger_equals_since(&evidence, &sandbox, &Default::default(), true);
    let counted = |op: &str| {
        (evidence["requirements"].as_array().unwrap().iter())
            .find(|r| r["operation"] == op)
            .unwrap()
            .clone()
    };
    let staged = sandbox_counts(&sandbox);
    let quote = counted("quote");
    assert_eq!(quote["unconfirmed"], 1, "{quote}");
    assert_eq!(
        staged["quote"],
        quote["succeeded"].as_u64().unwrap() + 1,
        "the retry made a second quote, kept apart"
    );
    let subscription = counted("subscription");
    assert_eq!(subscription["succeeded"], staged["subscription"]);
    assert_eq!(subscription["unconfirmed"], 0, "{subscription}");
    let exchanges = evidence["exchanges"].as_array().unwrap();
    let retried = |op: &str| {
        (exchanges.iter())
            .find(|e| e["operation"] == op && e["attempt"] == 2)
            .unwrap_or_else(|| panic!("{op}'s retry"))
            .clone()
    };
    let quote_retry = retried("quote");
    assert_eq!(quote_retry["response"]["status"], 201);
    let said = quote_retry["checks"].to_string();
    assert!(
        said.contains("not marked a replay") && said.contains("apart as unconfirmed"),
        "{said}"
    );
    assert!(!said.contains("answers as that attempt"), "{said}");
    // No second booking: the retry met the staging's refusal, reconciled by reading.
    let subscription_retry = retried("subscription");
    assert_eq!(subscription_retry["response"]["status"], 409);
    assert_eq!(subscription_retry["reconciled"], true);
}

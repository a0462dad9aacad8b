//! Flows that follow a living staging (docs/flows.md): values captured from any answer and
//! read as `captured.NAME`, waits whose polls are recorded but never counted, and steps in
//! the order a staging needs. The config and scenario are taken from docs/flows.md itself,
//! so the page cannot drift from what passes.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use ppcert::sandbox::SandboxOptions;
use serde_json::{Value, json};

use crate::common::*;

/// The fenced block of docs/flows.md whose first line is `# NAME`, without that line.
fn from_docs(name: &str) -> String {
    let page = include_str!("../../docs/flows.md");
    let marker = format!("```toml\n# {name}\n");
    let start = page.find(&marker).expect("docs/flows.md has the block") + marker.len();
    let end = start + page[start..].find("```").unwrap();
    page[start..end].to_string()
}

/// A sandbox with the contracts listed late and updates needing `If-Match`.
async fn living_sandbox() -> ppcert::sandbox::Sandbox {
    sandbox_with(SandboxOptions {
        contracts_delay: Some(Duration::from_millis(300)),
        require_if_match: true,
        ..fast_options()
    })
    .await
}

/// Every exchange line of a bundle's journal.
fn journal_exchanges(bundle: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(bundle.join("journal.jsonl")).unwrap();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "exchange")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_written_from_the_docs_certifies_a_lagging_staging_with_if_match() {
    let sandbox = living_sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scenarios")).unwrap();
    std::fs::write(
        dir.path().join("scenarios/conditional.toml"),
        from_docs("scenarios/conditional.toml"),
    )
    .unwrap();
    let run = Run::against(&sandbox)
        .config(&from_docs("ppcert.toml"))
        .scenario("scenarios/conditional.toml")
        .args(&["--backoff-ms", "1"]);
    let (finished, evidence) = run.evidence_in(dir.path()).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    assert!(every_requirement_met(&evidence));
    ledger_equals(&evidence, &sandbox);
    // Each update sent the ETag its flow's first contracts read captured, and says so.
    let exchanges = journal_exchanges(&dir.path().join("b"));
    let updates: Vec<&Value> = (exchanges.iter())
        .filter(|x| x["operation"] == "update" && x["outcome"] == "passed")
        .collect();
    assert_eq!(updates.len(), 5);
    for update in updates {
        let used = &update["reads"][0];
        assert_eq!(used["name"], "captured.etag", "{update}");
        assert!(
            used["from"]
                .as_str()
                .unwrap()
                .contains("captured by step 3:read_contracts from header ETag"),
            "{used}"
        );
    }
    // The contracts appeared late: the first reads polled, and no poll was counted.
    let polls = exchanges.iter().filter(|x| x["poll"] == true).count();
    assert!(
        polls > 0,
        "the contracts are listed 300 ms late: some read polled"
    );
    let reads = sandbox_counts(&sandbox)["read_contracts"];
    let counted_reads = (exchanges.iter())
        .filter(|x| x["operation"] == "read_contracts" && x["poll"] != true)
        .count() as u64;
    assert_eq!(
        reads,
        counted_reads + polls as u64,
        "no request beyond the polls"
    );
    assert_eq!(counted_reads, 10, "two counted reads per lifecycle flow");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_if_match_the_updates_fail_with_the_stagings_428() {
    let sandbox = living_sandbox().await;
    let (finished, evidence, _dir) = run_against(&sandbox, "certification", &[]).await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    assert!(!every_requirement_met(&evidence));
    assert!(
        finished.stdout.contains("428") && finished.stdout.contains("If-Match"),
        "{}",
        finished.stdout
    );
    ledger_equals(&evidence, &sandbox);
}

#[tokio::test]
async fn a_template_reading_a_value_no_earlier_step_captures_is_exit_2_with_nothing_sent() {
    let sandbox = living_sandbox().await;
    // The docs' config with the built-in certification order: the update comes before any
    // contracts read, so nothing has captured `etag` by then.
    let (finished, _dir) = Run::against(&sandbox)
        .config(&from_docs("ppcert.toml"))
        .scenario("certification")
        .finish()
        .await;
    assert_eq!(finished.code, 2, "{}\n{}", finished.stdout, finished.stderr);
    for words in [
        "ppcert.toml",
        "endpoints.update.headers.If-Match reads `captured.etag`",
        "flow `lifecycle`",
        "step 3, `update`",
    ] {
        assert!(
            finished.stderr.contains(words),
            "{words}: {}",
            finished.stderr
        );
    }
    assert_eq!(sandbox.requests_received(), 0);
    // A name no endpoint captures at all is a typo: refused by `validate`, naming the line.
    let dir = dir_with_config(
        "[target]\nenvironment = \"staging\"\n\n[endpoints.update.headers]\nIf-Match = \"{{ captured.etga }}\"\n",
    );
    let checked = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(checked.code, 2, "{}", checked.stdout);
    let said = format!("{}{}", checked.stdout, checked.stderr);
    assert!(
        said.contains("ppcert.toml:5") && said.contains("captured.etga"),
        "{said}"
    );
}

#[tokio::test]
async fn a_bad_wait_is_refused_naming_file_line_and_key() {
    for (wait, line, words) in [
        (
            "until = \"captured.contract_id is defined\"\nevery = \"soon\"\ntimeout = \"20s\"\n",
            4,
            "wait.every",
        ),
        (
            "until = \"captured.contract_id is defined\"\nevery = \"1s\"\ntimeout = \"2h\"\n",
            5,
            "wait.timeout",
        ),
        (
            "until = \"captured.contract_id ==\"\nevery = \"1s\"\ntimeout = \"20s\"\n",
            3,
            "wait.until",
        ),
        (
            "until = \"captured.nothing is true\"\nevery = \"1s\"\ntimeout = \"20s\"\n",
            3,
            "captured.nothing",
        ),
    ] {
        let dir = dir_with_config(&format!("\n[endpoints.read_contracts.wait]\n{wait}"));
        let checked = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
        let said = format!("{}{}", checked.stdout, checked.stderr);
        assert_eq!(checked.code, 2, "{said}");
        assert!(
            said.contains(&format!("ppcert.toml:{line}")) && said.contains(words),
            "{wait}: {said}"
        );
    }
}

/// A staging that makes quotes and subscriptions but never lists a contract, announcing a
/// short `Retry-After` on every read; counts its contracts reads.
async fn never_lists(reads: Arc<AtomicU64>) -> String {
    let quote = post(|| async {
        let id = format!("q{}", rand_suffix());
        (
            StatusCode::CREATED,
            axum::Json(json!({"data": {"id": id, "reference": format!("R-{id}")}})),
        )
    });
    let subscribe = post(|| async { (StatusCode::CREATED, axum::Json(json!({"data": {}}))) });
    let contracts = get(move || {
        let reads = reads.clone();
        async move {
            reads.fetch_add(1, Ordering::SeqCst);
            ([("retry-after", "0")], axum::Json(json!({"data": []}))).into_response()
        }
    });
    serve(
        axum::Router::new()
            .route("/quotes", quote)
            .route("/subscriptions", subscribe)
            .route("/subscriptions/{bn}/contracts", contracts),
    )
    .await
}

fn rand_suffix() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_never_met_fails_naming_the_condition_and_the_last_answer_polls_uncounted() {
    let reads = Arc::new(AtomicU64::new(0));
    let base = never_lists(reads.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("read.toml"),
        "name = \"read\"\ndescription = \"d\"\n\n[[requirements]]\noperation = \"read_contracts\"\nrequired = 1\n\n[[flows]]\nname = \"read\"\nsteps = [{ action = \"quote\" }, { action = \"subscribe\" }, { action = \"read_contracts\" }]\n",
    )
    .unwrap();
    let config = "[target]\nenvironment = \"staging\"\n\n[endpoints.read_contracts.wait]\nuntil = \"captured.contract_id is defined\"\nevery = \"100ms\"\ntimeout = \"1s\"\n";
    let run = Run::at(&base, "t0ken-for-a-test-server")
        .config(config)
        .scenario("read.toml")
        .args(&["--backoff-ms", "1"]);
    let (finished, evidence) = run.evidence_in(dir.path()).await;
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    assert!(
        finished
            .stdout
            .contains("`captured.contract_id is defined` still false after 1 s")
            && finished.stdout.contains("last answer HTTP 200"),
        "{}",
        finished.stdout
    );
    let exchanges = journal_exchanges(&dir.path().join("b"));
    let polls: Vec<&Value> = exchanges.iter().filter(|x| x["poll"] == true).collect();
    let last: Vec<&Value> = (exchanges.iter())
        .filter(|x| x["operation"] == "read_contracts" && x["poll"] != true)
        .collect();
    assert!(polls.len() >= 2, "every 100 ms for 1 s: {}", polls.len());
    assert_eq!(last.len(), 1, "one call, its polls apart");
    assert_eq!(reads.load(Ordering::SeqCst), polls.len() as u64 + 1);
    // Polls are neither counted nor failures: the ledger holds the one call the staging
    // answered, whose condition never held (the step failed, the read itself was answered).
    let requirement = &evidence["requirements"][0];
    assert_eq!(requirement["operation"], "read_contracts");
    assert_eq!(requirement["succeeded"], 1, "{requirement}");
    assert_eq!(
        requirement["failed"].as_u64().unwrap_or(0),
        0,
        "{requirement}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_built_in_contracts_read_waits_for_a_lagging_staging_with_no_config() {
    let sandbox = sandbox_with(SandboxOptions {
        contracts_delay: Some(Duration::from_millis(300)),
        ..fast_options()
    })
    .await;
    let (finished, evidence, dir) = run_against(&sandbox, "certification", &[]).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    ledger_equals(&evidence, &sandbox);
    let exchanges = journal_exchanges(&dir.path().join("bundle"));
    let polls = exchanges.iter().filter(|x| x["poll"] == true).count() as u64;
    let counted = (exchanges.iter())
        .filter(|x| x["operation"] == "read_contracts" && x["poll"] != true)
        .count() as u64;
    assert!(polls > 0, "an empty list was taken as final");
    assert_eq!(counted, 5, "one counted read per lifecycle flow");
    assert_eq!(sandbox_counts(&sandbox)["read_contracts"], counted + polls);
}

/// The default batch against a staging that lists contracts at once sends what it sent before
/// waits existed: no poll, one contracts read per lifecycle flow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_batch_against_a_prompt_staging_makes_no_poll() {
    let sandbox = sandbox_with(fast_options()).await;
    let (finished, _evidence, dir) = run_against(&sandbox, "certification", &[]).await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    let exchanges = journal_exchanges(&dir.path().join("bundle"));
    assert!(exchanges.iter().all(|x| x.get("poll").is_none()));
    assert_eq!(sandbox_counts(&sandbox)["read_contracts"], 5);
}

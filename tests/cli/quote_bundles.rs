//! Multi-bundle quote answers, as the provider documents them: `[partner] bundle` chooses the
//! entry a flow reads (its id, reference and price) and the subscription carries that bundle's
//! reference; without the setting several bundles fail the first step naming them.

use crate::common::*;
use ppcert::sandbox::{ApiDialect, SandboxOptions};

fn bundled(names: &[&str]) -> SandboxOptions {
    SandboxOptions {
        dialect: ApiDialect::ProviderDocs,
        quote_bundles: names.iter().map(|n| n.to_string()).collect(),
        ..fast_options()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_docs_and_the_partners_bundle_alone_certify_a_bundled_staging() {
    let sandbox = sandbox_with(bundled(&["Silver", "Gold"])).await;
    let (finished, evidence, _dir) = Run::against(&sandbox)
        .config("[partner]\nname = \"Acme\"\nbundle = \"Gold\"\n")
        .args(&["--dialect", "provider-docs", "--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    ledger_equals(&evidence, &sandbox);
    // At the server: every subscription used a Gold reference, none a Silver one.
    let subscribed = sandbox.subscribed_bundles();
    assert_eq!(
        subscribed.keys().collect::<Vec<_>>(),
        ["Gold"],
        "{subscribed:?}"
    );
    assert!(subscribed["Gold"] >= 5, "{subscribed:?}");
    // The evidence names the bundle and the T&C links offered for it.
    let quote = &evidence["bookings"][0]["quotes"][0];
    assert_eq!(quote["bundle"], "Gold", "{quote}");
    let urls: Vec<&str> = (quote["documents"].as_array().unwrap().iter())
        .map(|d| d["url"].as_str().unwrap())
        .collect();
    assert!(
        !urls.is_empty() && urls.iter().all(|u| u.contains("/gold-")),
        "{urls:?}"
    );
    let read = (evidence["exchanges"].as_array().unwrap().iter())
        .flat_map(|e| e["reads"].as_array().cloned().unwrap_or_default())
        .find(|r| r["name"] == "bundle")
        .expect("the bundle chosen is recorded as a value read");
    assert_eq!(read["value"], "Gold");
    assert_eq!(read["from"], "$.data[1]");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_bundles_without_the_setting_fail_the_first_step_naming_them() {
    let sandbox = sandbox_with(bundled(&["Silver", "Gold"])).await;
    let (finished, evidence, dir) = Run::against(&sandbox)
        .scenario("smoke")
        .args(&["--dialect", "provider-docs", "--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    assert!(
        finished.stdout.contains("2 bundles (Silver, Gold)")
            && finished.stdout.contains("[partner] bundle"),
        "{}",
        finished.stdout
    );
    let report = std::fs::read_to_string(dir.path().join("b/report.md")).unwrap();
    assert!(report.contains("Silver, Gold"), "{report}");
    // The quote was made and counted: the ledger still equals the staging's.
    ledger_equals(&evidence, &sandbox);
    assert!(sandbox.subscribed_bundles().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_bundle_needs_no_setting_and_an_unknown_one_names_what_was_offered() {
    let sandbox = sandbox_with(bundled(&["Silver"])).await;
    let (finished, evidence, _dir) = Run::against(&sandbox)
        .scenario("smoke")
        .args(&["--dialect", "provider-docs", "--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
    assert_eq!(evidence["exchanges"][0]["reads"][0]["name"], "bundle");
    assert_eq!(evidence["exchanges"][0]["reads"][0]["value"], "Silver");

    let (finished, _evidence, _dir) = Run::against(&sandbox)
        .scenario("smoke")
        .config("[partner]\nbundle = \"Platinum\"\n")
        .args(&["--dialect", "provider-docs", "--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    assert!(
        finished
            .stdout
            .contains("no bundle `Platinum` (it offers Silver)"),
        "{}",
        finished.stdout
    );
}

#[tokio::test]
async fn serve_quote_bundles_answers_the_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--quote-bundles",
        "Silver,Gold",
    ];
    let (mut child, base, token, document_url) = crate::serve::serving(dir.path(), &args).await;
    let http = http_client();
    let document: serde_json::Value = http.get(&document_url).json_answer().await;
    let reply: serde_json::Value = http
        .post(format!("{base}/quotes"))
        .bearer_auth(&token)
        .json(openapi_example_quote(&document))
        .json_answer()
        .await;
    let names: Vec<&str> = (reply["data"].as_array().unwrap().iter())
        .map(|e| e["bundle"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Silver", "Gold"], "{reply}");
    child.kill().await.unwrap();
}

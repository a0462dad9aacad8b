//! `--format ctrf`: ctrf.json in the bundle follows the Common Test Report Format, so the CTRF
//! reporters (job summaries, Slack, Teams) read it: checked against the format's rules as we
//! wrote them down (tests/cli/fixtures/ctrf.schema.json), for a passing run and a failed one.
//! ctrf_interop.rs checks the same documents with CTRF's reference implementation.

use serde_json::Value;

use crate::common::*;

fn validate(document: &Value) {
    let schema: Value = serde_json::from_str(include_str!("fixtures/ctrf.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(document)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "ctrf.json breaks CTRF: {errors:#?}\n{document:#}"
    );
}

#[tokio::test]
async fn ctrf_json_is_written_when_asked_and_follows_the_format() {
    let (done, evidence, dir) = Run::embedded()
        .args(&["--format", "ctrf,md"])
        .evidence()
        .await;
    assert_eq!(done.code, 0, "{}", done.stderr);
    let bundle = dir.path().join("b");
    let ctrf = read_json(&bundle.join("ctrf.json"));
    validate(&ctrf);
    assert!(
        !bundle.join("report.html").exists(),
        "only what was asked for"
    );
    let summary = &ctrf["results"]["summary"];
    let requirements = evidence["requirements"].as_array().unwrap().len();
    let flows = evidence["flows"].as_array().unwrap().len();
    assert_eq!(summary["tests"], requirements + flows);
    assert_eq!(summary["passed"], requirements + flows);
    assert_eq!(summary["failed"], 0);
    assert_eq!(ctrf["results"]["extra"]["verdict"], "passed");
    // The bundle with it still verifies.
    assert_eq!(ppcert(dir.path(), &["verify", "b"], None).await.code, 0);
    // Not written unless asked for; `ppcert report --format ctrf` adds it to a bundle.
    let (_, _, plain) = Run::embedded().scenario("smoke").evidence().await;
    assert!(!plain.path().join("b/ctrf.json").exists());
    let report = ppcert(plain.path(), &["report", "b", "--format", "ctrf"], None).await;
    assert_eq!(report.code, 0, "{}", report.stderr);
    validate(&read_json(&plain.path().join("b/ctrf.json")));
    assert_eq!(ppcert(plain.path(), &["verify", "b"], None).await.code, 0);
}

#[tokio::test]
async fn a_failed_run_has_failed_ctrf_tests_with_their_reasons() {
    let sandbox = sandbox_with(fast_options()).await;
    let run = Run::at(&sandbox.base_url(), "wrong-token-0123456789").args(&["--format", "ctrf"]);
    let (done, _, dir) = run.evidence().await;
    assert_eq!(done.code, 3, "{}", done.stderr);
    let ctrf = read_json(&dir.path().join("b/ctrf.json"));
    validate(&ctrf);
    assert!(
        ctrf["results"]["summary"]["failed"].as_u64().unwrap() > 0,
        "{ctrf:#}"
    );
    let failed = (ctrf["results"]["tests"].as_array().unwrap().iter())
        .find(|t| t["status"] == "failed" && t["suite"][0] == "ledger")
        .unwrap();
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("required succeeded")
    );
}

//! A run's outcome and its exit code: a flow that panics fails the run (never a pass, even in a
//! scenario without requirements), and a bundle that cannot be written after requests were
//! sent is its own documented code, not "usage error, nothing sent".

use serde_json::Value;

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flow_that_panics_fails_a_scenario_without_requirements() {
    let (finished, dir) = Run::embedded()
        .scenario("conformance")
        .env("PPCERT_TEST_PANIC_IN_FLOW", "conformance#1")
        .finish()
        .await;
    assert_eq!(finished.code, 1, "{}{}", finished.stdout, finished.stderr);
    let evidence: Value = read_json(&dir.path().join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "failed");
    let flow = &evidence["flows"][0];
    assert_eq!(flow["status"], "failed");
    assert!(
        flow["reason"].as_str().unwrap().contains("failpoint"),
        "the panic's message is kept: {flow}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_the_first_flow_does_not_hold_the_others_at_the_gate() {
    let (finished, dir) = Run::embedded()
        .args(&["--concurrency", "1"])
        .env("PPCERT_TEST_PANIC_IN_FLOW", "lifecycle#1")
        .finish()
        .await;
    assert_eq!(finished.code, 1, "{}{}", finished.stdout, finished.stderr);
    let evidence: Value = read_json(&dir.path().join("b/evidence.json"));
    let passed = evidence["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "completed")
        .count();
    assert_eq!(passed, 12, "every other flow ran: {}", evidence["flows"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_that_cannot_be_written_after_requests_were_sent_exits_6_keeping_the_journal() {
    let (finished, dir) = Run::embedded()
        .scenario("smoke")
        .env("PPCERT_TEST_FAIL_BUNDLE", "1")
        .finish()
        .await;
    let stderr = &finished.stderr;
    assert_eq!(finished.code, 6, "{}{stderr}", finished.stdout);
    assert!(stderr.contains("cannot write the bundle"), "{stderr}");
    assert!(stderr.contains("journal.jsonl"), "{stderr}");
    let journal = std::fs::read_to_string(dir.path().join("b/journal.jsonl")).unwrap();
    assert!(journal.contains("\"exchange\""), "{journal}");
}

/// After requests went out, a failure to write what was asked is exit 6 ("requests were sent
/// but the output could not be written"), never exit 2, which promises nothing was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_exit_2_after_sending_for_probe_or_webhook_send() {
    let sandbox = crate::common::sandbox().await;
    let base = sandbox.base_url();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("taken.toml"), "# mine\n").unwrap();
    for (path, why) in [
        ("no/such/folder/p.toml", "is not a folder"),
        ("taken.toml", "--force"),
    ] {
        let args = ["probe", "--base-url", &base, "--write-config", path];
        let refused = ppcert(dir.path(), &args, Some(sandbox.token())).await;
        assert_eq!(refused.code, 2, "{}", refused.stderr);
        assert!(refused.stderr.contains(why), "{}", refused.stderr);
        assert_eq!(
            sandbox.requests_received(),
            0,
            "refused before anything is sent"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("taken.toml")).unwrap(),
        "# mine\n"
    );

    let (_listener, url) = crate::webhooks::listen("github", dir.path()).await;
    let hooks = format!("{url}/hooks");
    let send = |junit: &'static str| {
        let args = [
            "webhook", "send", "--url", &hooks, "--scheme", "github", "--junit", junit,
        ];
        ppcert_command(dir.path(), &args, None)
            .env("PPCERT_WEBHOOK_SECRET", "whsec_test_0123456789")
            .output()
    };
    // A folder is no file: said before anything is sent.
    let refused = finished(send(".").await.unwrap());
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("nothing was sent"),
        "{}",
        refused.stderr
    );
    // A device that is always full fails the write itself, after the deliveries went out.
    let sent = finished(send("/dev/full").await.unwrap());
    assert_eq!(sent.code, 6, "{}", sent.stderr);
    assert!(
        sent.stderr.contains("the deliveries above were sent"),
        "{}",
        sent.stderr
    );
}

//! Hostile or mistaken input from the user: each is a clear error with exit 2 (or the
//! production guard's 5) before anything is sent, never a panic, a hang or a damaged file.

use ppcert::sandbox::SandboxOptions;

use crate::common::*;

fn said(finished: &Finished) -> String {
    format!("{}{}", finished.stdout, finished.stderr)
}

#[tokio::test]
async fn out_into_a_directory_holding_other_files_is_refused_and_they_are_untouched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    std::fs::write(dir.path().join("b/report.html"), "mine").unwrap();
    let refused = ppcert(dir.path(), &["run", "--out", "b"], None).await;
    assert_eq!(refused.code, 2, "{}", said(&refused));
    assert!(said(&refused).contains("not empty"), "{}", said(&refused));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b/report.html")).unwrap(),
        "mine"
    );
}

#[tokio::test]
async fn a_template_typo_or_a_runaway_template_is_refused_before_any_request() {
    let sandbox = sandbox().await;
    let base = sandbox.base_url();
    for (config, key) in [
        (
            "[endpoints.quote_deletion]\npath = \"/quotes/{{ quote.idd }}\"\n",
            "endpoints.quote_deletion: path: `quote.idd`: no such attribute; quote has id, reference",
        ),
        (
            "[endpoints.quote_deletion]\npath = \"/q/{% for i in range(90000) %}{% for j in range(90000) %}x{% endfor %}{% endfor %}\"\n",
            "fuel",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ppcert.toml"), config).unwrap();
        let validated = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
        assert_eq!(validated.code, 2, "{}", said(&validated));
        assert!(said(&validated).contains(key), "{}", said(&validated));
        assert!(
            said(&validated).contains("ppcert.toml:"),
            "{}",
            said(&validated)
        );
        let ran = ppcert(
            dir.path(),
            &run_args(&base, "b", &[]),
            Some(sandbox.token()),
        )
        .await;
        assert_eq!(ran.code, 2, "{}", said(&ran));
    }
    assert_eq!(sandbox.requests_received(), 0, "nothing was sent");
}

#[tokio::test]
async fn a_path_prefix_that_is_not_a_path_is_a_usage_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    for prefix in ["/{", "api", "/a//b", "/a b"] {
        let refused = ppcert(
            dir.path(),
            &["serve", "--addr", "127.0.0.1:0", "--path-prefix", prefix],
            None,
        )
        .await;
        assert_eq!(refused.code, 2, "{prefix}: {}", said(&refused));
        assert!(
            said(&refused).contains("--path-prefix"),
            "{}",
            said(&refused)
        );
    }
}

#[tokio::test]
async fn a_token_file_with_a_bom_or_a_nul_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    for (bytes, expected) in [
        (
            "\u{feff}sbx_0123456789".as_bytes().to_vec(),
            "byte-order mark",
        ),
        (b"sbx_0123\x00456789".to_vec(), "control character"),
    ] {
        std::fs::write(dir.path().join("token"), bytes).unwrap();
        let refused = ppcert(
            dir.path(),
            &[
                "run",
                "--base-url",
                "http://127.0.0.1:9",
                "--token-file",
                "token",
            ],
            None,
        )
        .await;
        assert_eq!(refused.code, 2, "{}", said(&refused));
        assert!(said(&refused).contains(expected), "{}", said(&refused));
    }
}

#[tokio::test]
async fn a_token_file_over_64_kib_is_refused_at_once() {
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    let base = serve(axum::Router::new().fallback(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async { axum::http::StatusCode::UNAUTHORIZED }
    }))
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "t".repeat(2 << 20)).unwrap();
    for command in ["run", "check-token"] {
        let refused = ppcert(
            dir.path(),
            &[command, "--base-url", &base, "--token-file", "token"],
            None,
        )
        .await;
        assert_eq!(refused.code, 2, "{}", said(&refused));
        assert!(
            said(&refused).contains("--token-file token: larger than 64 KiB"),
            "{}",
            said(&refused)
        );
    }
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing was sent"
    );
}

#[tokio::test]
async fn a_token_without_a_target_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let refused = ppcert(dir.path(), &["run"], Some("a-staging-token")).await;
    assert_eq!(refused.code, 2, "{}", said(&refused));
    assert!(said(&refused).contains("no target"), "{}", said(&refused));
    let checked = ppcert(dir.path(), &["check-token"], Some("a-staging-token")).await;
    assert_eq!(checked.code, 2, "{}", said(&checked));
}

#[tokio::test]
async fn the_production_guard_judges_the_requests_overrides_and_probes_would_send() {
    let dir = tempfile::tempdir().unwrap();
    let production = "[target]\nbase_url = \"https://127.0.0.1:9\"\nenvironment = \"production\"\n";
    std::fs::write(dir.path().join("ppcert.toml"), production).unwrap();
    let probes = ppcert(
        dir.path(),
        &["run", "--scenario", "conformance"],
        Some("a-production-token"),
    )
    .await;
    assert_eq!(
        probes.code,
        5,
        "refusal probes send writes: {}",
        said(&probes)
    );
    std::fs::write(
        dir.path().join("reads.toml"),
        "name = \"reads\"\ndescription = \"d\"\n[[flows]]\nname = \"f\"\nsteps = [{ action = \"quote\" }, { action = \"subscribe\" }, { action = \"read_contracts\" }]\n",
    )
    .unwrap();
    let writes = ppcert(
        dir.path(),
        &["run", "--scenario", "reads.toml"],
        Some("a-production-token"),
    )
    .await;
    assert_eq!(writes.code, 5, "{}", said(&writes));
    let quote_elsewhere = format!("{production}[endpoints.quote]\npath = \"/subscriptions\"\n");
    std::fs::write(dir.path().join("ppcert.toml"), quote_elsewhere).unwrap();
    let overridden = ppcert(
        dir.path(),
        &["run", "--scenario", "smoke"],
        Some("a-production-token"),
    )
    .await;
    assert_eq!(
        overridden.code,
        5,
        "a quote pointed at another call: {}",
        said(&overridden)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_keeps_what_the_run_recorded_and_refuses_what_contradicts_it() {
    let sandbox = sandbox_with(SandboxOptions {
        claim_step: std::time::Duration::from_millis(20),
        ..SandboxOptions::default()
    })
    .await;
    let other = crate::common::sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    // A local scenario, recorded by its path: naming it again on resume is the same scenario.
    let smoke = ppcert::scenario::BUILTIN
        .iter()
        .find(|(name, _)| *name == "smoke")
        .unwrap()
        .1;
    std::fs::create_dir(dir.path().join("scenarios")).unwrap();
    std::fs::write(dir.path().join("scenarios/mine.toml"), smoke).unwrap();
    let base = sandbox.base_url();
    let first = ppcert(
        dir.path(),
        &run_args(&base, "b", &["--scenario", "mine", "--seed", "5"]),
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(first.code, 0, "{}", said(&first));
    let other_base = other.base_url();
    for (args, token, expected) in [
        (
            vec!["--base-url", other_base.as_str()],
            sandbox.token(),
            "not http",
        ),
        // A fresh token from the same source is expected (the old one may have expired);
        // tokens from another source are refused ("" below: no PPCERT_TOKEN).
        (
            vec!["--token-command", "echo another-token-entirely"],
            "",
            "took its tokens from static token (PPCERT_TOKEN), not token command echo",
        ),
        (vec!["--scale", "3"], sandbox.token(), "--scale 1, not 3"),
        // Resolved before the config is validated: another scenario or environment is refused,
        // not silently replaced by the recorded one.
        (
            vec!["--scenario", "certification"],
            sandbox.token(),
            "not `certification`; leave --scenario out",
        ),
        (vec!["--seed", "6"], sandbox.token(), "seed is 5, not 6"),
        (
            vec!["--no-flight-cancellations"],
            sandbox.token(),
            "does sell flights",
        ),
        (
            vec!["--dialect", "provider-docs"],
            sandbox.token(),
            "dialect `spec`, not `provider-docs`",
        ),
        (
            vec!["--environment", "production"],
            sandbox.token(),
            "the run was against staging, not production",
        ),
    ] {
        let mut all = vec!["run", "--resume", "b"];
        all.extend(args);
        let refused = ppcert(dir.path(), &all, (!token.is_empty()).then_some(token)).await;
        assert_eq!(refused.code, 2, "{}", said(&refused));
        assert!(
            said(&refused).contains(expected),
            "{expected}: {}",
            said(&refused)
        );
    }
    let resumed = ppcert(dir.path(), &["run", "--resume", "b"], Some(sandbox.token())).await;
    assert_eq!(
        resumed.code,
        0,
        "the recorded target is used: {}",
        said(&resumed)
    );
    // A config file's environment (probe writes one) gives way to the recorded one.
    std::fs::write(
        dir.path().join("ppcert.toml"),
        "[target]\nenvironment = \"production\"\n",
    )
    .unwrap();
    let args = ["run", "--resume", "b", "--scenario", "mine", "--seed", "5"];
    let again = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(again.code, 0, "{}", said(&again));
}

/// A webhook secret file that holds nothing (an HMAC key everyone has: any delivery would
/// verify) or is no secret at all (2 MB, `/dev/zero`: read until memory ran out) is refused at
/// once by every command that takes one, before anything listens or is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_secret_file_empty_or_over_64_kib_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty"), " \n").unwrap();
    std::fs::write(dir.path().join("large"), "s".repeat(2 << 20)).unwrap();
    let mut files = vec![
        ("empty", "empty; with no secret"),
        ("large", "larger than 64 KiB"),
    ];
    if cfg!(unix) {
        files.push(("/dev/zero", "larger than 64 KiB"));
    }
    let commands: [&[&str]; 3] = [
        &["webhook", "listen", "--addr", "127.0.0.1:0"],
        &[
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--webhook-url",
            "http://127.0.0.1:9/h",
        ],
        &["webhook", "send", "--url", "http://127.0.0.1:9/h"],
    ];
    for (file, expected) in files {
        for command in commands {
            let mut args = command.to_vec();
            args.extend(["--webhook-secret-file", file]);
            let running = ppcert_command(dir.path(), &args, None)
                .kill_on_drop(true)
                .output();
            let finished = tokio::time::timeout(std::time::Duration::from_secs(60), running)
                .await
                .unwrap_or_else(|_| panic!("{args:?}: still running, the file taken as a secret"))
                .unwrap();
            let stderr = String::from_utf8_lossy(&finished.stderr);
            assert_eq!(finished.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains(&format!("--webhook-secret-file {file}: {expected}")),
                "{args:?}: {stderr}"
            );
        }
    }
}

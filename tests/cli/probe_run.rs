//! `ppcert probe` sends its calls as `run` does: `captured.*` carried from answer to answer,
//! `[endpoints.*.wait]` polled, a pending write confirmed. Whatever config `run` certifies a
//! staging with, `probe --config` accepts, and the config it writes is certified by `run`.

use std::time::Duration;

use ppcert::sandbox::{Sandbox, SandboxOptions, SubscriptionOperations};

use crate::common::*;
use crate::living_staging::{living_config, living_sandbox};

const FLOWS: &str = include_str!("../../docs/flows.md");

/// `probe --config ppcert.toml --write-config probed.toml` in `dir` against `sandbox` (at
/// `base`: its own URL, or a front's), then
/// `run` with the written file alone (and `extra`); the probe's own calls are taken off the
/// sandbox's counts, so the run's ledger is held to the run's calls.
pub async fn probe_then_certify(
    sandbox: &Sandbox,
    base: &str,
    dir: &std::path::Path,
    config: &str,
    extra: &[&str],
) -> (Finished, String) {
    std::fs::write(dir.join("ppcert.toml"), config).unwrap();
    let args = [
        "probe",
        "--config",
        "ppcert.toml",
        "--base-url",
        base,
        "--write-config",
        "probed.toml",
    ];
    let probed = ppcert(dir, &args, Some(sandbox.token())).await;
    let written = std::fs::read_to_string(dir.join("probed.toml")).unwrap_or_default();
    let before = sandbox_counts(sandbox);
    let mut args = vec!["run", "--config", "probed.toml", "--out", "b"];
    args.extend(["--backoff-ms", "1"]);
    args.extend(extra);
    let ran = ppcert(dir, &args, Some(sandbox.token())).await;
    assert_eq!(ran.code, 0, "{}\n{}\n{written}", ran.stdout, ran.stderr);
    let evidence = read_json(&dir.join("b/evidence.json"));
    assert_eq!(evidence["verdict"], "passed");
    ledger_equals_since(&evidence, sandbox, &before, false);
    (probed, written)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_accepts_the_documented_living_staging_config_and_writes_one_run_certifies() {
    let sandbox = living_sandbox().await;
    let config = living_config(FLOWS);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("scenarios")).unwrap();
    let scenario = toml_block(FLOWS, "# scenarios/conditional.toml");
    std::fs::write(dir.path().join("scenarios/conditional.toml"), scenario).unwrap();
    let extra = ["--scenario", "scenarios/conditional.toml"];
    let (probed, written) =
        probe_then_certify(&sandbox, &sandbox.base_url(), dir.path(), &config, &extra).await;
    assert_eq!(probed.code, 0, "{}\n{}", probed.stdout, probed.stderr);
    // The update carried the ETag the contracts read captured: the staging took it (a
    // missing If-Match is 428), on the booking the wait saw listed.
    assert!(
        (probed.stdout.lines()).any(|l| l.starts_with("ok     update (PATCH)")),
        "{}",
        probed.stdout
    );
    assert!(
        written.contains("If-Match = \"{{ captured.etag }}\""),
        "{written}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_follows_a_202_subscription_to_its_operation_as_run_does() {
    let sandbox = sandbox_with(SandboxOptions {
        subscription_operations: Some(SubscriptionOperations {
            running_for: Duration::from_millis(300),
            fail_every: None,
        }),
        ..fast_options()
    })
    .await;
    let config = toml_block(
        FLOWS,
        "# ppcert.toml: subscriptions confirmed through a 202 operation",
    );
    let dir = tempfile::tempdir().unwrap();
    let (probed, _) =
        probe_then_certify(&sandbox, &sandbox.base_url(), dir.path(), &config, &[]).await;
    assert_eq!(probed.code, 0, "{}\n{}", probed.stdout, probed.stderr);
    // The subscription's line is its confirming read's: the operation, read as succeeded.
    let subscribe = (probed.stdout.lines())
        .find(|l| l.contains(" subscribe: "))
        .unwrap_or_default();
    assert!(subscribe.starts_with("ok"), "{}", probed.stdout);
    assert!(subscribe.contains("/operations/"), "{}", probed.stdout);
}

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/fixtures/mtls")
        .join(name)
}

/// `--cacert`, `--cert`/`--key` and `--header` given to probe are written into the config,
/// so `run` with that file alone reaches the same staging; a credential header is read from
/// the environment there, never written in clear.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_flags_given_to_probe_are_written_so_run_needs_only_the_file() {
    let key = "gw+key/0123456789=abc";
    let sandbox = sandbox_with(SandboxOptions {
        transport: ppcert::sandbox::Transport {
            required_headers: vec![
                ("X-Api-Version".into(), "2".into()),
                ("X-Gateway-Key".into(), key.into()),
            ],
            tls: Some(ppcert::sandbox::TlsIdentity {
                cert_chain_pem: std::fs::read(fixture("server.pem")).unwrap(),
                key_pem: std::fs::read(fixture("server.key")).unwrap(),
                client_ca_pem: Some(std::fs::read(fixture("ca.pem")).unwrap()),
            }),
            ..Default::default()
        },
        ..fast_options()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    for name in ["ca.pem", "client.pem", "client.key"] {
        std::fs::copy(fixture(name), certs.join(name)).unwrap();
    }
    let base = sandbox.base_url();
    let gateway = format!("X-Gateway-Key: {key}");
    let args = [
        "probe",
        "--base-url",
        &base,
        "--cacert",
        "certs/ca.pem",
        "--cert",
        "certs/client.pem",
        "--key",
        "certs/client.key",
        "--header",
        "X-Api-Version: 2",
        "--header",
        &gateway,
        "--write-config",
        "probed.toml",
    ];
    let probed = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(probed.code, 0, "{}\n{}", probed.stdout, probed.stderr);
    let written = std::fs::read_to_string(dir.path().join("probed.toml")).unwrap();
    assert!(!written.contains(key), "{written}");
    assert!(
        probed.stdout.contains("PPCERT_HEADER_X_GATEWAY_KEY"),
        "{}",
        probed.stdout
    );
    // The run from another folder: the written paths do not depend on where probe ran.
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("ppcert.toml"), &written).unwrap();
    let before = sandbox_counts(&sandbox);
    let ran = ppcert_command(
        elsewhere.path(),
        &["run", "--out", "b", "--backoff-ms", "1"],
        Some(sandbox.token()),
    )
    .env("PPCERT_HEADER_X_GATEWAY_KEY", key)
    .output()
    .await
    .unwrap();
    let ran = finished(ran);
    assert_eq!(ran.code, 0, "{}\n{}\n{written}", ran.stdout, ran.stderr);
    let evidence = read_json(&elsewhere.path().join("b/evidence.json"));
    ledger_equals_since(&evidence, &sandbox, &before, false);
}

//! `ppcert probe --write-config` writes a config that works: a dialect switch keeps the
//! headers of `[target.headers]` (probe goes on sending them, the file keeps the table), and a
//! quote answered with one bundle is written as `[partner] bundle`; each then certified by `run`.

use ppcert::sandbox::{ApiDialect, Sandbox, SandboxOptions, Transport};

use crate::common::*;

/// `probe --write-config ppcert.toml --force` over `config`, then `run` with the written file.
async fn probe_then_run(sandbox: &Sandbox, config: &str) -> (Finished, String, Finished) {
    let dir = dir_with_config(config);
    let base = sandbox.base_url();
    let token = Some(sandbox.token());
    let args = [
        "probe",
        "--base-url",
        &base,
        "--write-config",
        "ppcert.toml",
        "--force",
    ];
    let probed = ppcert(dir.path(), &args, token).await;
    let written = std::fs::read_to_string(dir.path().join("ppcert.toml")).unwrap();
    let ran = ppcert(
        dir.path(),
        &["run", "--out", "b", "--backoff-ms", "1"],
        token,
    )
    .await;
    (probed, written, ran)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialect_switch_keeps_the_headers_of_every_call() {
    let sandbox = sandbox_with(SandboxOptions {
        dialect: ApiDialect::ProviderDocs,
        transport: Transport {
            required_headers: vec![("X-Api-Version".into(), "2".into())],
            ..Transport::default()
        },
        ..fast_options()
    })
    .await;
    let config = "[target.headers]\nX-Api-Version = \"2\"   # the gateway's version\n";
    let (probed, written, ran) = probe_then_run(&sandbox, config).await;
    let out = format!("{}{}", probed.stdout, probed.stderr);
    assert_eq!(probed.code, 0, "{out}");
    assert!(out.contains("tried dialect `provider-docs`"), "{out}");
    assert!(!out.contains("needs the header"), "{out}");
    assert!(written.contains("dialect = \"provider-docs\""), "{written}");
    assert!(
        written.contains("[target.headers]\nX-Api-Version = \"2\"   # the gateway's version"),
        "{written}"
    );
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_bundle_a_quote_offers_is_written_and_the_run_passes() {
    let sandbox = sandbox_with(SandboxOptions {
        dialect: ApiDialect::ProviderDocs,
        quote_bundles: vec!["Gold".into()],
        ..fast_options()
    })
    .await;
    let (probed, written, ran) =
        probe_then_run(&sandbox, "[target]\ndialect = \"provider-docs\"\n").await;
    assert_eq!(probed.code, 0, "{}{}", probed.stdout, probed.stderr);
    assert!(
        written.contains("# inferred: the quote answer offered this one bundle\nbundle = \"Gold\""),
        "{written}"
    );
    assert!(
        !probed.stdout.contains("written commented out"),
        "{}",
        probed.stdout
    );
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
}

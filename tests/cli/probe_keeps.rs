//! `ppcert probe --write-config` writes a config that works: a dialect switch keeps the
//! headers of `[target.headers]` (probe goes on sending them, the file keeps the table), and a
//! quote answered with one bundle is written as `[partner] bundle`; each then certified by `run`.

use ppcert::sandbox::{ApiDialect, Sandbox, SandboxOptions, Transport};

use crate::common::*;
use crate::probe_learns::probe_then_run;

/// `config` with the token in `[auth]`, as `probe_then_run` wants a config to carry it.
fn with_token(config: &str, sandbox: &Sandbox) -> String {
    format!("{config}\n[auth]\ncommand = \"echo {}\"\n", sandbox.token())
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
    let config = with_token(config, &sandbox);
    let base = sandbox.base_url();
    let (probed, ran, written, _dir) = probe_then_run(&base, &sandbox, Some(&config), &[]).await;
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
    let config = with_token("[target]\ndialect = \"provider-docs\"\n", &sandbox);
    let base = sandbox.base_url();
    let (probed, ran, written, _dir) = probe_then_run(&base, &sandbox, Some(&config), &[]).await;
    assert_eq!(probed.code, 0, "{}{}", probed.stdout, probed.stderr);
    assert!(
        written.contains("# inferred: the quote answer offered this one bundle\nbundle = \"Gold\""),
        "{written}"
    );
    assert!(
        !probed.stdout.contains("uncomment `[partner] bundle`")
            && probed.stdout.contains("next: ppcert run"),
        "{}",
        probed.stdout
    );
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
}

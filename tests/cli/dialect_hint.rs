//! A run whose failures look like a dialect mismatch ends, on the console and in report.md,
//! with the command that would fix it; a run failing for other reasons does not say so, and a
//! failure by the user's own `expect` rule names the rule; a misspelt attribute is named even
//! when piped to `tojson`.

use ppcert::sandbox::{ApiDialect, SandboxOptions};

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialect_mismatch_ends_with_the_command_that_fixes_it() {
    let sandbox = sandbox_with(SandboxOptions {
        dialect: ApiDialect::ProviderDocs,
        ..fast_options()
    })
    .await;
    let (finished, _evidence, dir) = Run::against(&sandbox)
        .args(&["--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    let next = finished
        .stdout
        .lines()
        .find(|l| l.starts_with("next: "))
        .unwrap_or_else(|| panic!("no next line: {}", finished.stdout));
    assert!(
        next.contains("ppcert run --dialect provider-docs"),
        "{next}"
    );
    assert!(
        next.contains("ppcert probe --write-config ppcert.toml"),
        "{next}"
    );
    // Under the verdict, before the ledger: not after every exchange.
    let report = std::fs::read_to_string(dir.path().join("b/report.md")).unwrap();
    let next = report.find("### What to try next").expect("a next step");
    assert!(
        next < report.find("### Requirement ledger").unwrap(),
        "{report}"
    );
    assert!(report[next..].contains("ppcert probe --write-config ppcert.toml"));
    let html = std::fs::read_to_string(dir.path().join("b/report.html")).unwrap();
    let next = html.find("What to try next</h2>").expect("a next step");
    assert!(next < html.find("id=\"requirements\"").unwrap());
    assert!(html[next..].contains("--dialect provider-docs"));

    // The same dialect on both sides passes and names no next step.
    let (finished, _evidence, dir) = Run::against(&sandbox)
        .args(&["--backoff-ms", "1", "--dialect", "provider-docs"])
        .evidence()
        .await;
    assert_eq!(finished.code, 0, "{}", finished.stdout);
    assert!(!finished.stdout.contains("next: "), "{}", finished.stdout);
    let report = std::fs::read_to_string(dir.path().join("b/report.md")).unwrap();
    assert!(!report.contains("What to try next"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_by_the_users_expect_rule_names_the_rule() {
    let sandbox = sandbox_with(fast_options()).await;
    let (finished, _dir) = Run::against(&sandbox)
        .scenario("smoke")
        .config("[endpoints.quote]\nexpect = [200, 202]\n")
        .finish()
        .await;
    assert_eq!(finished.code, 1, "{}", finished.stdout);
    assert!(
        finished
            .stdout
            .contains("answered HTTP 201 (not in `[endpoints.quote] expect = [200, 202]`)"),
        "{}",
        finished.stdout
    );
    assert!(!finished.stdout.contains("next: "), "{}", finished.stdout);
}

#[tokio::test]
async fn a_misspelt_attribute_piped_to_tojson_is_named() {
    let dir = dir_with_config(
        "[endpoints.quote]\nbody = '''{\"data\": {\"airline\": {{ flight.airline_iata | tojson }}}}'''\n",
    );
    let checked = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(checked.code, 2, "{}", checked.stderr);
    assert!(
        checked.stderr.contains("ppcert.toml:2")
            && checked
                .stderr
                .contains("`flight.airline_iata`: no such attribute; flight has airlineIata"),
        "{}",
        checked.stderr
    );
}

/// The proxy says what `run` says when the partner's client speaks another dialect than the
/// staging: the command that shows the staging's, and the proxy's flag to check against it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_gives_the_same_next_hint_as_run() {
    let sandbox = sandbox_with(SandboxOptions {
        dialect: ApiDialect::ProviderDocs,
        ..fast_options()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let client = r#""$PPCERT_BIN" run --base-url "$PPCERT_PROXY_URL" --out inner --backoff-ms 1 --no-progress >/dev/null"#;
    let args = [
        "proxy",
        "--base-url",
        &sandbox.base_url(),
        "--out",
        "b",
        "--",
        "sh",
        "-c",
        client,
    ];
    let output = ppcert_command(dir.path(), &args, Some(sandbox.token()))
        .env("PPCERT_BIN", env!("CARGO_BIN_EXE_ppcert"))
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let finished = finished(output);
    assert_eq!(finished.code, 1, "{}\n{}", finished.stdout, finished.stderr);
    let next = (finished.stdout.lines())
        .find(|l| l.starts_with("next: "))
        .unwrap_or_else(|| panic!("no next line: {}", finished.stdout));
    assert!(
        next.contains("ppcert proxy --dialect provider-docs"),
        "{next}"
    );
    assert!(
        next.contains("ppcert probe --write-config ppcert.toml"),
        "{next}"
    );
    let report = std::fs::read_to_string(dir.path().join("b/report.md")).unwrap();
    let hint = report.find("### What to try next").expect("a next step");
    assert!(hint < report.find("### Requirement ledger").unwrap());
}

//! Requests `ppcert proxy` does not recognise: forwarded, and on the record. A partner client
//! sends calls no configured endpoint matches; the staging counts them, and so must the
//! journal, the evidence (checked again by `verify`), the reports and the console.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::common::*;
use crate::proxy::Partner;

/// The proxy in front of `base` until Ctrl-C; the URL the partner uses, and a handle giving
/// back what it said on stdout and stderr once it has ended.
async fn proxy_session(
    dir: &std::path::Path,
    base: &str,
) -> (
    tokio::process::Child,
    String,
    tokio::task::JoinHandle<(String, String)>,
) {
    let args = crate::proxy::proxy_args(base, &[]);
    let mut child = ppcert_command(dir, &args, None)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    // The first line names the address; read byte by byte so nothing after it is lost.
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read_exact(&mut byte).await.is_ok() && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    let first = String::from_utf8(first).unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    let said = tokio::spawn(async move {
        let (mut out, mut err) = (String::new(), String::new());
        let (a, b) = tokio::join!(
            stdout.read_to_string(&mut out),
            stderr.read_to_string(&mut err)
        );
        a.unwrap();
        b.unwrap();
        (out, err)
    });
    (child, url, said)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_the_proxy_does_not_recognise_are_counted_as_the_staging_counts_them() {
    let sandbox = sandbox_with(fast_options()).await;
    let unknown_seen = Arc::new(AtomicUsize::new(0));
    let seen = unknown_seen.clone();
    let rule: crate::hostile::Rule = Arc::new(move |_, path, _| {
        if path == "/health" || path.starts_with("/partners") {
            seen.fetch_add(1, Ordering::SeqCst);
        }
        crate::hostile::Action::Forward
    });
    let staging = crate::hostile::front(&sandbox, rule).await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url, said) = proxy_session(dir.path(), &staging).await;
    let partner = Partner::at(url, sandbox.token());
    partner.quote(quote_body(1, 350.0, 40)).await;
    let mut statuses = Vec::new();
    for path in ["/health", "/health", "/partners/me?key=abc"] {
        statuses.push(partner.call("GET", path, None).await.0);
    }
    let code = crate::proxy::stop(&mut proxy).await;
    let (stdout, stderr) = tokio::time::timeout(Duration::from_secs(20), said)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(code, 1, "requirements not met: {stdout}\n{stderr}");
    assert_eq!(
        unknown_seen.load(Ordering::SeqCst),
        3,
        "the staging saw them"
    );
    let (health, partners) = (statuses[0], statuses[2]);

    // The journal: a line of its own per request, the query (which may carry a key) left out.
    let bundle = dir.path().join("b");
    let journal = std::fs::read_to_string(bundle.join("journal.jsonl")).unwrap();
    let lines: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "unrecognised")
        .collect();
    assert_eq!(lines.len(), 3, "the staging counted 3, so must the journal");
    assert_eq!(lines[2]["path"], "/partners/me");
    assert_eq!(lines[2]["status"], partners);
    assert!(!journal.contains("key=abc"), "the query is not recorded");

    // The evidence: each distinct request once, with its count; the ledger untouched.
    let evidence = read_json(&bundle.join("evidence.json"));
    let section = &evidence["unrecognised"];
    assert_eq!(section["count"], 3, "{section}");
    assert_eq!(section["requests"][0]["path"], "/health");
    assert_eq!(section["requests"][0]["count"], 2);
    assert_eq!(section["requests"][0]["status"], health);
    assert_eq!(section["requests"][1]["method"], "GET");
    assert_eq!(evidence["exchanges"].as_array().unwrap().len(), 1);
    let described = format!(
        "not recognised: 3 requests forwarded without being checked or counted (no configured endpoint matches): GET /health → {health} ×2, GET /partners/me → {partners}"
    );
    assert!(
        stdout.contains(&described),
        "the summary lists them: {stdout}"
    );
    assert!(
        stderr.contains(&format!(
            "not recognised: GET /health → {health} (forwarded"
        )),
        "said as it happens: {stderr}"
    );
    let markdown = std::fs::read_to_string(bundle.join("report.md")).unwrap();
    assert!(markdown.contains(&described), "{markdown}");
    let html = std::fs::read_to_string(bundle.join("report.html")).unwrap();
    assert!(html.contains("not recognised: 3 requests"), "report.html");

    // `verify` counts them again from the journal, and names a record that says otherwise.
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    let mut forged = evidence.clone();
    forged["unrecognised"]["count"] = 1.into();
    std::fs::write(
        bundle.join("evidence.json"),
        serde_json::to_string_pretty(&forged).unwrap(),
    )
    .unwrap();
    rehash(&bundle, "evidence.json");
    let checked = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(checked.code, 1, "{}", checked.stdout);
    assert!(
        checked
            .stderr
            .contains("unrecognised.count: evidence.json says 1, the journal gives 3"),
        "{}",
        checked.stderr
    );
}

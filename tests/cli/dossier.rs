//! `ppcert dossier`, `run --dossier` and `proxy --dossier`: a partner certified in pieces holds
//! one dossier whose ledger counts each operation once and equals the staging's own counts,
//! and which `verify` checks down to every member.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;

use crate::common::*;
use crate::hostile::{Action, Rule, front};
use crate::proxy::{Partner, start_proxy, stop};

/// The dossier's `succeeded` per operation.
fn dossier_counts(dossier: &Value) -> BTreeMap<String, u64> {
    dossier["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let op = r["operation"].as_str().unwrap().to_string();
            (op, r["succeeded"].as_u64().unwrap())
        })
        .collect()
}

/// The sandbox's own counts of the operations the dossier is held to.
fn staging_counts(sandbox: &ppcert::sandbox::Sandbox) -> BTreeMap<String, u64> {
    let mut counts = sandbox_counts(sandbox);
    counts.remove("read_contracts");
    counts
}

/// A partner's proxy session (its own client) that does everything but report flight
/// cancellations, `bookings` times, joining the dossier `d`; the proxy's exit code.
async fn proxy_session(dir: &Path, sandbox: &ppcert::sandbox::Sandbox, bookings: usize) -> i32 {
    proxy_session_to(dir, &sandbox.base_url(), sandbox.token(), bookings).await
}

/// As [`proxy_session`], the proxy in front of `upstream`.
async fn proxy_session_to(dir: &Path, upstream: &str, token: &str, bookings: usize) -> i32 {
    let (mut proxy, url) = start_proxy(dir, upstream, &["--dossier", "d"]).await;
    let partner = Partner::at(url, token);
    for i in 0..bookings {
        partner.booking(&format!("DOSSIER-{i}"), false).await;
    }
    stop(&mut proxy).await
}

async fn run_dossier(dir: &Path, sandbox: &ppcert::sandbox::Sandbox, out: &str) -> Finished {
    run_dossier_at(dir, &sandbox.base_url(), sandbox.token(), out).await
}

async fn run_dossier_at(dir: &Path, base: &str, token: &str, out: &str) -> Finished {
    let args = ["run", "--base-url", base, "--dossier", "d", "--out", out];
    ppcert(dir, &args, Some(token)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_session_and_a_run_of_what_it_lacked_make_one_passed_dossier() {
    let sandbox = sandbox_with(fast_options()).await;
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(proxy_session(dir.path(), &sandbox, 5).await, 1);
    let lacking = read_json(&dir.path().join("d/dossier.json"));
    assert_eq!(lacking["verdict"], "failed");
    assert_eq!(dossier_counts(&lacking)["flight_cancellation"], 0);

    let before = sandbox_counts(&sandbox);
    let filled = run_dossier(dir.path(), &sandbox, "r").await;
    assert_eq!(filled.code, 0, "{}{}", filled.stdout, filled.stderr);
    let after = sandbox_counts(&sandbox);
    for op in ["quote_deletion", "update", "claim"] {
        assert_eq!(after.get(op), before.get(op), "the run made no {op}");
    }
    assert_eq!(after["flight_cancellation"], 3);
    let dossier = read_json(&dir.path().join("d/dossier.json"));
    assert_eq!(dossier["verdict"], "passed");
    assert_eq!(dossier_counts(&dossier), staging_counts(&sandbox));
    assert_eq!(dossier["members"].as_array().unwrap().len(), 2);

    // Nothing missing: nothing sent, no bundle, and it says so.
    let again = run_dossier(dir.path(), &sandbox, "r2").await;
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("no request sent"), "{}", again.stdout);
    assert_eq!(sandbox_counts(&sandbox), after);
    assert!(!dir.path().join("r2").exists());

    // The same bundles again (the session twice, the run's): nothing counts twice.
    let added = ppcert(dir.path(), &["dossier", "b", "r", "b", "--out", "d"], None).await;
    assert_eq!(added.code, 0, "{}", added.stderr);
    assert!(
        added.stderr.contains("already in the dossier"),
        "{}",
        added.stderr
    );
    let same = read_json(&dir.path().join("d/dossier.json"));
    assert_eq!(same, dossier);
    // A fresh dossier of the session twice counts it once.
    let twice = ppcert(dir.path(), &["dossier", "b", "b", "--out", "d2"], None).await;
    assert_eq!(
        twice.code, 1,
        "flight cancellations still missing: {}",
        twice.stderr
    );
    assert_eq!(
        dossier_counts(&read_json(&dir.path().join("d2/dossier.json"))),
        dossier_counts(&lacking)
    );

    let verified = ppcert(dir.path(), &["verify", "d"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    // diff compares two dossiers by the bundles added last: the session, then the run.
    let diffed = ppcert(dir.path(), &["diff", "d2", "d"], None).await;
    assert!(diffed.code <= 1, "{}{}", diffed.stdout, diffed.stderr);
    assert!(
        diffed.stderr.contains("comparing the bundle added last"),
        "{}",
        diffed.stderr
    );
    tampered_member_fails(dir.path()).await;
    edited_record_fails(dir.path()).await;
}

/// A `dossier.json` claiming more than its members give (its manifest line rewritten too)
/// fails `verify`, naming the field.
async fn edited_record_fails(dir: &Path) {
    copy_dir(&dir.join("d"), &dir.join("e"));
    let path = dir.join("e/dossier.json");
    let mut record = read_json(&path);
    record["requirements"][0]["succeeded"] = serde_json::json!(99);
    std::fs::write(&path, serde_json::to_vec_pretty(&record).unwrap()).unwrap();
    rehash(&dir.join("e"), "dossier.json");
    let verified = ppcert(dir, &["verify", "e"], None).await;
    assert_eq!(verified.code, 1, "{}", verified.stdout);
    assert!(
        verified
            .stderr
            .contains("dossier.json.requirements[0].succeeded: says 99"),
        "{}",
        verified.stderr
    );
}

/// A member whose journal was changed (its manifest line rewritten too, and the dossier's, as
/// a forger would) fails `verify` of the dossier, naming the member.
async fn tampered_member_fails(dir: &Path) {
    copy_dir(&dir.join("d"), &dir.join("t"));
    let member = std::fs::read_dir(dir.join("t"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("member-"))
        .unwrap();
    let path = dir.join("t").join(&member);
    rewrite_package(&path, |name, bytes| match name {
        "journal.jsonl" => String::from_utf8(bytes)
            .unwrap()
            .replacen("\"status\":201", "\"status\":202", 1)
            .into_bytes(),
        _ => bytes,
    });
    rehash(&dir.join("t"), &member);
    let verified = ppcert(dir, &["verify", "t"], None).await;
    assert_eq!(verified.code, 1, "{}", verified.stdout);
    assert!(
        verified.stderr.contains(&member) && verified.stderr.contains("journal.jsonl"),
        "{}",
        verified.stderr
    );
}

/// Rewrites each file of the package at `path` through `change`.
fn rewrite_package(path: &Path, change: impl Fn(&str, Vec<u8>) -> Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes.as_slice()));
    let mut out = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut content = Vec::new();
        entry.read_to_end(&mut content).unwrap();
        let file = name.rsplit('/').next().unwrap_or("").to_string();
        let content = match file.is_empty() {
            true => content,
            false => change(&file, content),
        };
        let mut header = entry.header().clone();
        header.set_size(content.len() as u64);
        header.set_cksum();
        out.append_data(&mut header, &name, content.as_slice())
            .unwrap();
    }
    std::fs::write(path, out.into_inner().unwrap().finish().unwrap()).unwrap();
}

/// The issue's "done when": a proxy session, a run interrupted and never resumed, and a
/// `run --dossier` that fills the gap make one dossier that `verify --key` accepts, PASSED,
/// with the staging's own counts, whose report names the bundles that proved each requirement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partner_certified_in_three_pieces_holds_one_signed_passed_dossier() {
    let sandbox = sandbox_with(ppcert::sandbox::SandboxOptions {
        latency: Duration::from_millis(8),
        ..fast_options()
    })
    .await;
    // Every piece talks to the staging through a front that, once armed, holds the claims
    // until the test has interrupted the run: the run cannot finish before its Ctrl-C, however
    // slow the machine.
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let armed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (held, holding) = (gate.clone(), armed.clone());
    let rule: Rule = Arc::new(move |method, path, _| match (method.as_str(), path) {
        ("POST", p) if p.ends_with("/claims") && holding.load(Ordering::SeqCst) => {
            Action::ForwardWhenOpen(held.clone())
        }
        _ => Action::ForwardWithHeaders,
    });
    let base = front(&sandbox, rule).await;
    let dir = tempfile::tempdir().unwrap();
    proxy_session_to(dir.path(), &base, sandbox.token(), 2).await;
    armed.store(true, Ordering::SeqCst);

    let child = Run::at(&base, sandbox.token()).out("i").spawn(dir.path());
    let journal = dir.path().join("i/journal.jsonl");
    // Well into the run: its Ctrl-C handler is installed by then (a run killed by the signal
    // before it is would end with no code at all).
    while journal_lines(&journal).await < 20 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    interrupt(&child).await;
    // The signal is delivered; the claims in flight may now end, and none is started after.
    tokio::time::sleep(Duration::from_millis(50)).await;
    gate.add_permits(tokio::sync::Semaphore::MAX_PERMITS / 2);
    let stopped = child.wait_with_output().await.unwrap();
    assert_eq!(stopped.status.code(), Some(130));
    assert_eq!(
        read_json(&dir.path().join("i/evidence.json"))["verdict"],
        "incomplete"
    );
    let added = ppcert(dir.path(), &["dossier", "i", "--out", "d"], None).await;
    assert_eq!(added.code, 1, "still lacking: {}", added.stderr);

    let filled = run_dossier_at(dir.path(), &base, sandbox.token(), "f").await;
    assert_eq!(filled.code, 0, "{}{}", filled.stdout, filled.stderr);
    let keygen = ppcert(dir.path(), &["keygen", "--out", "k"], None).await;
    assert_eq!(keygen.code, 0, "{}", keygen.stderr);
    let signed = ppcert(dir.path(), &["sign", "d", "--key", "k"], None).await;
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    let verified = ppcert(dir.path(), &["verify", "d", "--key", "k.pub"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    assert!(
        verified.stdout.contains("verdict PASSED"),
        "{}",
        verified.stdout
    );
    // With --key, every bundle added must carry a signature by it: the session does not.
    let unsigned = ppcert(
        dir.path(),
        &["dossier", "b", "--key", "k.pub", "--out", "s"],
        None,
    )
    .await;
    assert_eq!(unsigned.code, 1, "{}", unsigned.stderr);
    assert!(
        unsigned
            .stderr
            .contains("b: attestation.intoto.json: missing"),
        "{}",
        unsigned.stderr
    );

    let dossier = read_json(&dir.path().join("d/dossier.json"));
    assert_eq!(dossier["verdict"], "passed");
    assert_eq!(dossier_counts(&dossier), staging_counts(&sandbox));
    let kinds: Vec<&str> = (dossier["members"].as_array().unwrap().iter())
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["proxy session", "run", "run"]);
    let report = std::fs::read_to_string(dir.path().join("d/report.md")).unwrap();
    for requirement in dossier["requirements"].as_array().unwrap() {
        let op = requirement["operation"].as_str().unwrap();
        let line = report
            .lines()
            .find(|l| l.starts_with(&format!("| `{op}`")))
            .unwrap_or_else(|| panic!("no row for {op}: {report}"));
        let proofs = requirement["proven_by"].as_array().unwrap();
        assert!(!proofs.is_empty(), "{op} proven by someone");
        for proof in proofs {
            assert!(line.contains(proof["run_id"].as_str().unwrap()), "{line}");
        }
    }
    // A lost report is written again, the same bytes: the signature still holds.
    std::fs::remove_file(dir.path().join("d/report.html")).unwrap();
    let rendered = ppcert(dir.path(), &["report", "d"], None).await;
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    let verified = ppcert(dir.path(), &["verify", "d", "--key", "k.pub"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    // The package of the signed dossier verifies too, wherever it goes.
    let packed = ppcert(dir.path(), &["package", "d", "--out", "d.tar.gz"], None).await;
    assert_eq!(packed.code, 0, "{}", packed.stderr);
    let verified = ppcert(dir.path(), &["verify", "d.tar.gz", "--key", "k.pub"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

/// A front that forwards everything and drops the sandbox's self-naming header: a staging.
async fn staging_in_front(sandbox: &ppcert::sandbox::Sandbox) -> String {
    let rule: crate::hostile::Rule = Arc::new(|_, _, _| crate::hostile::Action::Forward);
    crate::hostile::front(sandbox, rule).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundles_of_another_target_or_of_the_sandbox_are_refused_by_name() {
    let sandbox = sandbox_with(fast_options()).await;
    let (staging, other) = (
        staging_in_front(&sandbox).await,
        staging_in_front(&sandbox).await,
    );
    let dir = tempfile::tempdir().unwrap();
    for (base, out) in [
        (&staging, "st"),
        (&other, "ot"),
        (&sandbox.base_url(), "sb"),
    ] {
        let run = Run::at(base, sandbox.token()).scenario("smoke").out(out);
        assert_eq!(run.finish_in(dir.path()).await.code, 0);
    }
    let evidence = read_json(&dir.path().join("st/evidence.json"));
    assert_eq!(
        evidence["run"]["target"]["sandbox"], false,
        "the front hides the sandbox"
    );

    let mixed = ppcert(dir.path(), &["dossier", "sb", "st", "--out", "d"], None).await;
    assert_eq!(mixed.code, 2, "{}", mixed.stderr);
    assert!(
        mixed
            .stderr
            .contains("sb: its answers came from ppcert's sandbox"),
        "{}",
        mixed.stderr
    );
    assert!(!dir.path().join("d").exists(), "nothing written");

    let elsewhere = ppcert(dir.path(), &["dossier", "st", "ot", "--out", "d"], None).await;
    assert_eq!(elsewhere.code, 2, "{}", elsewhere.stderr);
    assert!(
        elsewhere.stderr.contains(&format!("ot: target {other}")),
        "{}",
        elsewhere.stderr
    );
    // Into an existing staging dossier, likewise.
    let started = ppcert(dir.path(), &["dossier", "st", "--out", "d"], None).await;
    assert_eq!(started.code, 1, "smoke meets little: {}", started.stderr);
    let later = ppcert(dir.path(), &["dossier", "sb", "--out", "d"], None).await;
    assert_eq!(later.code, 2, "{}", later.stderr);
    assert!(
        later
            .stderr
            .contains("never counts toward a staging dossier")
    );
    let run = ppcert(
        dir.path(),
        &["run", "--base-url", &other, "--dossier", "d", "--out", "x"],
        Some(sandbox.token()),
    )
    .await;
    assert_eq!(run.code, 2, "refused before sending: {}", run.stderr);
    assert!(!dir.path().join("x").exists());
}

/// Every claim the staging shows, with `status: ""` (a staging that writes the field before it
/// decides): the run's claims are all `unconfirmed`.
fn blank_claim_statuses(_: &str, mut body: Value) -> (crate::hostile::Headers, Value) {
    fn blank(value: &mut Value) {
        match value {
            Value::Object(map) => {
                let claim = map
                    .get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| id.starts_with("cl_"));
                if claim && map.contains_key("status") {
                    map.insert("status".into(), Value::String(String::new()));
                }
                map.values_mut().for_each(blank);
            }
            Value::Array(items) => items.iter_mut().for_each(blank),
            _ => {}
        }
    }
    blank(&mut body);
    (Vec::new(), body)
}

/// The dossier of a FAILED bundle is FAILED: its ledger, claim confirmations included, is
/// computed again from the member's exchanges, never taken from a count that was not earned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dossier_of_a_failed_bundle_is_failed() {
    let sandbox = sandbox_with(fast_options()).await;
    let rule: crate::hostile::Rule = Arc::new(|method, path, _| {
        if (method == "POST" && path.ends_with("/claims")) || path.ends_with("/contracts") {
            crate::hostile::Action::Rewrite(blank_claim_statuses)
        } else {
            crate::hostile::Action::Forward
        }
    });
    let staging = crate::hostile::front(&sandbox, rule).await;
    let dir = tempfile::tempdir().unwrap();
    let run = Run::at(&staging, sandbox.token()).out("r");
    let finished = run.finish_in(dir.path()).await;
    let evidence = read_json(&dir.path().join("r/evidence.json"));
    assert_eq!(evidence["verdict"], "failed", "{}", finished.stderr);
    let claims = (evidence["requirements"].as_array().unwrap().iter())
        .find(|r| r["operation"] == "claim")
        .unwrap();
    assert_eq!(claims["succeeded"], 0, "no claim was confirmed: {claims}");
    let dossier = ppcert(dir.path(), &["dossier", "r", "--out", "d"], None).await;
    assert_eq!(dossier.code, 1, "{}", dossier.stderr);
    let record = read_json(&dir.path().join("d/dossier.json"));
    assert_eq!(record["verdict"], "failed");
    let verified = ppcert(dir.path(), &["verify", "d"], None).await;
    assert_eq!(
        verified.code, 0,
        "the dossier says what its member proves: {}",
        verified.stderr
    );
}

/// A forger puts a bundle of another server into a dossier in place of a member, and rewrites
/// `dossier.json` and the manifest to match: `verify` and `sign` refuse it, naming the member.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_of_another_target_fails_verify_and_sign_whatever_dossier_json_says() {
    let sandbox = sandbox_with(fast_options()).await;
    let (staging, other) = (
        staging_in_front(&sandbox).await,
        staging_in_front(&sandbox).await,
    );
    let dir = tempfile::tempdir().unwrap();
    for (base, out) in [(&staging, "st"), (&staging, "st2"), (&other, "ot")] {
        let run = Run::at(base, sandbox.token()).scenario("smoke").out(out);
        assert_eq!(run.finish_in(dir.path()).await.code, 0);
    }
    let made = ppcert(dir.path(), &["dossier", "st", "st2", "--out", "d"], None).await;
    assert_eq!(made.code, 1, "smoke meets little: {}", made.stderr);
    let alone = ppcert(dir.path(), &["dossier", "ot", "--out", "o"], None).await;
    assert_eq!(alone.code, 1, "{}", alone.stderr);
    // The forgery: st2's package replaced by ot's, every field naming st2 rewritten.
    copy_dir(&dir.path().join("d"), &dir.path().join("f"));
    let (genuine, foreign) = (
        read_json(&dir.path().join("d/dossier.json"))["members"][1].clone(),
        read_json(&dir.path().join("o/dossier.json"))["members"][0].clone(),
    );
    let replace = |mut text: String| {
        for field in ["run_id", "journal_sha256", "started_at", "finished_at"] {
            text = text.replace(
                genuine[field].as_str().unwrap(),
                foreign[field].as_str().unwrap(),
            );
        }
        text
    };
    let forged = dir.path().join("f");
    let old_file = genuine["file"].as_str().unwrap();
    let file = replace(old_file.to_string());
    std::fs::remove_file(forged.join(old_file)).unwrap();
    let package = dir.path().join("o").join(foreign["file"].as_str().unwrap());
    std::fs::copy(package, forged.join(&file)).unwrap();
    for name in ["dossier.json", "MANIFEST.sha256"] {
        let text = std::fs::read_to_string(forged.join(name)).unwrap();
        std::fs::write(forged.join(name), replace(text).replace(old_file, &file)).unwrap();
    }
    rehash(&forged, "dossier.json");
    rehash(&forged, &file);
    let verified = ppcert(dir.path(), &["verify", "f"], None).await;
    assert_eq!(verified.code, 1, "{}", verified.stdout);
    assert!(
        verified
            .stderr
            .contains(&format!("member {file}: target {other}")),
        "{}",
        verified.stderr
    );
    assert!(
        !verified.stderr.contains(": says "),
        "dossier.json matches its members: only the member's target gives it away: {}",
        verified.stderr
    );
    assert_eq!(
        ppcert(dir.path(), &["keygen", "--out", "k"], None)
            .await
            .code,
        0
    );
    let signed = ppcert(dir.path(), &["sign", "f", "--key", "k"], None).await;
    assert_ne!(signed.code, 0, "{}", signed.stderr);
    assert!(!dir.path().join("f/attestation.intoto.json").exists());
    assert!(signed.stderr.contains("target"), "{}", signed.stderr);
}

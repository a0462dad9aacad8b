//! Signed evidence: `keygen`, `run --sign-key`, `sign`, `package` and `verify --key`, as
//! ppcert's own code checks them (an independent verifier checks the same bundles in
//! `attest_interop`).

use std::path::{Path, PathBuf};

use crate::common::*;

pub(crate) async fn keygen(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let made = ppcert(dir, &["keygen", "--out", name], None).await;
    assert_eq!(made.code, 0, "{}", made.stderr);
    (dir.join(name), dir.join(format!("{name}.pub")))
}

/// A signed smoke run, its key pair, in a fresh directory.
pub(crate) async fn signed_run() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keygen(dir.path(), "key").await;
    let args = [
        "run",
        "--scenario",
        "smoke",
        "--out",
        "b",
        "--sign-key",
        "key",
    ];
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    assert!(finished.stderr.contains("signed: "), "{}", finished.stderr);
    let bundle = dir.path().join("b");
    (dir, bundle, public)
}

pub(crate) async fn verify_with(dir: &Path, target: &Path, key: &Path) -> Finished {
    let args = [
        "verify",
        target.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
    ];
    ppcert(dir, &args, None).await
}

fn fingerprint(public: &Path) -> String {
    let pem = std::fs::read_to_string(public).unwrap();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    use base64::Engine;
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    ppcert::digest::sha256_hex(&der)
}

#[tokio::test]
async fn keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (private, public) = keygen(dir.path(), "k").await;
    let mode = private.metadata().unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let pem = std::fs::read_to_string(&private).unwrap();
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "PKCS#8 PEM");
    assert!(
        std::fs::read_to_string(&public)
            .unwrap()
            .starts_with("-----BEGIN PUBLIC KEY-----")
    );
    let again = ppcert(dir.path(), &["keygen", "--out", "k"], None).await;
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&private).unwrap(), pem, "untouched");
}

/// The issue's "done when": ppcert accepts a signed run's attestation with the public key,
/// and rejects it after any file changes or with another key (as does an independent
/// verifier: `attest_interop`).
#[tokio::test]
async fn a_signed_run_is_accepted_and_rejected_after_a_change_or_with_another_key() {
    let (dir, bundle, public) = signed_run().await;
    let accepted = verify_with(dir.path(), &bundle, &public).await;
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    let print = fingerprint(&public);
    assert!(
        accepted
            .stdout
            .contains(&format!("signed: by the key SHA256:{print}")),
        "{}",
        accepted.stdout
    );
    for said in [
        "Proven:",
        "verdict PASSED",
        "Not proven:",
        "who holds the key",
        "sandbox",
    ] {
        assert!(
            accepted.stdout.contains(said),
            "{said}: {}",
            accepted.stdout
        );
    }

    // Another key: refused.
    let (_, other) = keygen(dir.path(), "other").await;
    let refused = verify_with(dir.path(), &bundle, &other).await;
    assert_eq!(refused.code, 1);
    assert!(
        refused.stderr.contains("no signature in it verifies"),
        "{}",
        refused.stderr
    );

    // Any file changed, even with its manifest line re-hashed: refused.
    for name in CHANGED {
        let copy = changed_copy(dir.path(), &bundle, name);
        let refused = verify_with(dir.path(), &copy, &public).await;
        assert_eq!(refused.code, 1, "{name}: {}", refused.stdout);
        assert!(
            refused.stderr.contains("changed since it was signed"),
            "{name}: {}",
            refused.stderr
        );
    }
}

/// The files a signed bundle's checks change, one at a time.
pub(crate) const CHANGED: [&str; 3] = ["report.md", "journal.jsonl", "MANIFEST.sha256"];

/// A copy of `bundle` in `dir` with `name` changed by a byte, its manifest line re-hashed
/// (but the manifest's own change left as it is).
pub(crate) fn changed_copy(dir: &Path, bundle: &Path, name: &str) -> PathBuf {
    let copy = dir.join(format!("changed-{name}"));
    copy_dir(bundle, &copy);
    let path = copy.join(name);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"\n");
    std::fs::write(&path, bytes).unwrap();
    if name != "MANIFEST.sha256" {
        rehash(&copy, name);
    }
    copy
}

/// A statement rewritten to say "passed", re-encoded into the envelope: the signature no
/// longer holds, and without a key the statement no longer matches the journal.
#[tokio::test]
async fn a_rewritten_statement_fails_with_the_key_and_without_it() {
    let (dir, bundle, public) = rewritten_statement().await;
    let with_key = verify_with(dir.path(), &bundle, &public).await;
    assert_eq!(with_key.code, 1);
    assert!(
        with_key.stderr.contains("no signature in it verifies"),
        "{}",
        with_key.stderr
    );
    let without = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(without.code, 1);
    assert!(
        without.stderr.contains("is not what the journal gives"),
        "{}",
        without.stderr
    );
}

/// A failed run, signed, whose statement was then rewritten to say "passed" and re-encoded
/// into the envelope; its directory, bundle and public key.
pub(crate) async fn rewritten_statement() -> (tempfile::TempDir, PathBuf, PathBuf) {
    use base64::Engine;
    let engine = base64::engine::general_purpose::STANDARD;
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keygen(dir.path(), "key").await;
    std::fs::write(dir.path().join("short.toml"), SHORT).unwrap();
    let args = [
        "run",
        "--scenario",
        "short.toml",
        "--out",
        "b",
        "--sign-key",
        "key",
    ];
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(
        finished.code, 1,
        "a failed run is signed too: {}",
        finished.stderr
    );
    let bundle = dir.path().join("b");
    let path = bundle.join("attestation.intoto.json");
    let mut envelope = read_json(&path);
    let payload = engine
        .decode(envelope["payload"].as_str().unwrap())
        .unwrap();
    let mut statement: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(statement["predicate"]["verdict"], "failed");
    assert_eq!(
        statement["predicateType"],
        "https://ppcert.dev/certification/v1"
    );
    statement["predicate"]["verdict"] = "passed".into();
    envelope["payload"] = engine
        .encode(serde_json::to_vec(&statement).unwrap())
        .into();
    std::fs::write(&path, envelope.to_string()).unwrap();
    (dir, bundle, public)
}

const SHORT: &str = r#"name = "short"
description = "Requires two quotes, makes one"

[[requirements]]
operation = "quote"
required = 2

[[flows]]
name = "quote"
steps = [{ action = "quote" }]
"#;

#[tokio::test]
async fn sign_afterwards_refuses_a_bundle_that_does_not_verify_or_is_signed_already() {
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keygen(dir.path(), "key").await;
    let run = ppcert(
        dir.path(),
        &["run", "--scenario", "smoke", "--out", "b"],
        None,
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let unsigned = verify_with(dir.path(), &dir.path().join("b"), &public).await;
    assert_eq!(unsigned.code, 1, "--key on an unsigned bundle");
    assert!(
        unsigned.stderr.contains("not signed"),
        "{}",
        unsigned.stderr
    );
    std::fs::write(dir.path().join("b/extra.txt"), "x").unwrap();
    let refused = ppcert(dir.path(), &["sign", "b", "--key", "key"], None).await;
    assert_eq!(refused.code, 1);
    assert!(
        refused.stderr.contains("refusing to sign"),
        "{}",
        refused.stderr
    );
    assert!(!dir.path().join("b/attestation.intoto.json").exists());
    std::fs::remove_file(dir.path().join("b/extra.txt")).unwrap();
    let signed = ppcert(dir.path(), &["sign", "b", "--key", "key"], None).await;
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    assert_eq!(
        verify_with(dir.path(), &dir.path().join("b"), &public)
            .await
            .code,
        0
    );
    let again = ppcert(dir.path(), &["sign", "b", "--key", "key"], None).await;
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("already signed"), "{}", again.stderr);
    let forced = ppcert(dir.path(), &["sign", "b", "--key", "key", "--force"], None).await;
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    // The public key signs nothing, and nothing of the private key is ever printed.
    let wrong = ppcert(
        dir.path(),
        &["sign", "b", "--key", "key.pub", "--force"],
        None,
    )
    .await;
    assert_eq!(wrong.code, 2);
    let secret = std::fs::read_to_string(dir.path().join("key")).unwrap();
    let body: String = secret.lines().filter(|l| !l.starts_with("-----")).collect();
    for out in [&signed, &forced, &wrong] {
        assert!(!out.stdout.contains(&body) && !out.stderr.contains(&body));
    }
}

/// `--json` keeps stdout one JSON object: signing says so on stderr.
#[tokio::test]
async fn a_signed_run_with_json_prints_only_its_summary_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    keygen(dir.path(), "key").await;
    let args = [
        "run",
        "--scenario",
        "smoke",
        "--out",
        "b",
        "--sign-key",
        "key",
        "--json",
    ];
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let summary: serde_json::Value = serde_json::from_str(&finished.stdout).unwrap();
    assert_eq!(summary["verdict"], "passed", "{summary}");
    assert!(finished.stderr.contains("signed: "), "{}", finished.stderr);
    assert!(dir.path().join("b/attestation.intoto.json").is_file());
}

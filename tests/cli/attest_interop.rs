//! The attestation checked by an independent DSSE verifier (securesystemslib and pyca's
//! Ed25519, `.ci/verify-dsse.py`), not only by ppcert's own code. They need the reference
//! implementations `.ci/run` installs, so a plain `cargo test` lists them as ignored and
//! `.ci/run` runs them (`cargo test --test cli -- --ignored`), where a missing one fails.

use std::path::Path;

use crate::attest::{CHANGED, changed_copy, keygen, rewritten_statement, signed_run};
use crate::common::*;

/// The Python with the independent DSSE verifier's libraries (see [`reference_python`]).
fn independent_python() -> String {
    reference_python(
        "securesystemslib, cryptography",
        "the independent DSSE check",
    )
}

/// Runs `.ci/verify-dsse.py`; whether it accepted, and what it said.
fn independent_verdict(python: &str, bundle: &Path, public: &Path) -> (bool, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/verify-dsse.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(bundle.join("attestation.intoto.json"))
        .arg(public)
        .arg(bundle)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), said)
}

/// Another implementation reads both files `keygen` writes and finds them one pair.
#[tokio::test]
#[ignore = "needs the reference implementations .ci/run installs"]
async fn another_implementation_reads_a_generated_key_pair_as_one_pair() {
    let python = independent_python();
    let dir = tempfile::tempdir().unwrap();
    let (private, public) = keygen(dir.path(), "k").await;
    let check = "import sys\nfrom cryptography.hazmat.primitives import serialization as s\n\
        k = s.load_pem_private_key(open(sys.argv[1], 'rb').read(), None)\n\
        p = s.load_pem_public_key(open(sys.argv[2], 'rb').read())\n\
        raw = lambda key: key.public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)\n\
        assert raw(k.public_key()) == raw(p)\nprint('pair')";
    let out = std::process::Command::new(python)
        .args(["-c", check])
        .arg(&private)
        .arg(&public)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The "done when": an independent verifier accepts a signed run's attestation with
/// the public key, and rejects it after any file changes or with another key.
#[tokio::test]
#[ignore = "needs the reference implementations .ci/run installs"]
async fn the_independent_verifier_accepts_a_signed_run_and_refuses_a_change_or_another_key() {
    let python = independent_python();
    let (dir, bundle, public) = signed_run().await;
    let (ok, said) = independent_verdict(&python, &bundle, &public);
    assert!(
        ok,
        "the independent verifier rejects a genuine attestation: {said}"
    );
    let (_, other) = keygen(dir.path(), "other").await;
    assert!(!independent_verdict(&python, &bundle, &other).0);
    for name in CHANGED {
        let copy = changed_copy(dir.path(), &bundle, name);
        let (ok, said) = independent_verdict(&python, &copy, &public);
        assert!(
            !ok,
            "{name}: the independent verifier accepts a changed file: {said}"
        );
    }
}

#[tokio::test]
#[ignore = "needs the reference implementations .ci/run installs"]
async fn the_independent_verifier_refuses_a_rewritten_statement() {
    let python = independent_python();
    let (_dir, bundle, public) = rewritten_statement().await;
    assert!(!independent_verdict(&python, &bundle, &public).0);
}

//! The bundle's integrity: `verify` holds a bundle to its manifest's exact file set and never
//! looks outside it; `report` refuses to re-render (and so to write a fresh manifest for) a
//! record it cannot check.

use std::path::Path;

use crate::common::*;

/// A finished run's bundle in a fresh directory.
async fn bundle() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert(
        dir.path(),
        &["run", "--scenario", "smoke", "--out", "b", "--seed", "3"],
        None,
    )
    .await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let out = dir.path().join("b");
    (dir, out)
}

async fn verify(dir: &Path, bundle: &Path) -> Finished {
    ppcert(dir, &["verify", bundle.to_str().unwrap()], None).await
}

fn manifest_without(bundle: &Path, name: &str) {
    let path = bundle.join("MANIFEST.sha256");
    let kept: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.ends_with(&format!("  {name}")))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(path, kept).unwrap();
}

#[tokio::test]
async fn report_refuses_a_bundle_whose_manifest_was_deleted() {
    let (dir, bundle) = bundle().await;
    std::fs::remove_file(bundle.join("MANIFEST.sha256")).unwrap();
    let evidence = bundle.join("evidence.json");
    let edited = std::fs::read_to_string(&evidence)
        .unwrap()
        .replace("\"failed\"", "\"passed\"");
    std::fs::write(&evidence, edited).unwrap();
    let refused = ppcert(dir.path(), &["report", bundle.to_str().unwrap()], None).await;
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("refusing to re-render"),
        "{}",
        refused.stderr
    );
    assert!(
        !bundle.join("MANIFEST.sha256").exists(),
        "no fresh manifest vouches for it"
    );
}

#[tokio::test]
async fn verify_requires_the_record_even_when_its_manifest_line_went_with_it() {
    let (dir, bundle) = bundle().await;
    std::fs::remove_file(bundle.join("journal.jsonl")).unwrap();
    manifest_without(&bundle, "journal.jsonl");
    let checked = verify(dir.path(), &bundle).await;
    assert_eq!(checked.code, 1);
    assert!(
        checked
            .stderr
            .contains("journal.jsonl: not in the manifest"),
        "{}",
        checked.stderr
    );
}

#[tokio::test]
async fn verify_never_reads_outside_the_bundle_and_refuses_an_empty_manifest() {
    let (dir, bundle) = bundle().await;
    let outside = dir.path().join("x");
    std::fs::write(&outside, "anything").unwrap();
    let digest = ppcert::digest::sha256_hex(b"anything");
    let manifest = bundle.join("MANIFEST.sha256");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str(&format!(
        "{digest}  ../x\n{digest}  {}\n",
        outside.display()
    ));
    std::fs::write(&manifest, text).unwrap();
    let checked = verify(dir.path(), &bundle).await;
    assert_eq!(checked.code, 1);
    assert!(
        checked.stderr.contains("`../x` is outside the bundle"),
        "{}",
        checked.stderr
    );
    assert!(
        checked.stderr.matches("is outside the bundle").count() == 2,
        "{}",
        checked.stderr
    );
    std::fs::write(&manifest, "").unwrap();
    let empty = verify(dir.path(), &bundle).await;
    assert_eq!(empty.code, 1);
    assert!(
        empty.stderr.contains("evidence.json: not in the manifest"),
        "{}",
        empty.stderr
    );
}

#[tokio::test]
async fn an_intact_bundle_still_verifies_and_re_renders() {
    let (dir, bundle) = bundle().await;
    assert_eq!(verify(dir.path(), &bundle).await.code, 0);
    let rendered = ppcert(dir.path(), &["report", bundle.to_str().unwrap()], None).await;
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    assert_eq!(verify(dir.path(), &bundle).await.code, 0);
}

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

/// A scenario that fails: two quotes required, one made.
const FAILING: &str = r#"name = "short"
description = "Requires two quotes, makes one"

[[requirements]]
operation = "quote"
required = 2

[[flows]]
name = "quote"
steps = [{ action = "quote" }]
"#;

/// A finished run that failed a requirement, in a fresh directory.
async fn failed_bundle() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("short.toml"), FAILING).unwrap();
    let args = [
        "run",
        "--scenario",
        "short.toml",
        "--out",
        "b",
        "--seed",
        "4",
    ];
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let out = dir.path().join("b");
    (dir, out)
}

/// The forgery of the issue: a failed run's verdict set to passed, its requirements marked
/// met, its manifest line re-hashed. The journal gives the truth; verify names the lie and
/// report renders nothing.
#[tokio::test]
async fn a_forged_verdict_fails_verify_and_is_never_rendered_passed() {
    let (dir, bundle) = failed_bundle().await;
    let path = bundle.join("evidence.json");
    let mut evidence = read_json(&path);
    assert_eq!(evidence["verdict"], "failed");
    evidence["verdict"] = "passed".into();
    for requirement in evidence["requirements"].as_array_mut().unwrap() {
        requirement["met"] = true.into();
        requirement["succeeded"] = requirement["required"].clone();
    }
    std::fs::write(&path, serde_json::to_string_pretty(&evidence).unwrap()).unwrap();
    rehash(&bundle, "evidence.json");
    let html_before = std::fs::read(bundle.join("report.html")).unwrap();

    let checked = verify(dir.path(), &bundle).await;
    assert_eq!(checked.code, 1, "{}", checked.stdout);
    for named in [
        r#"verdict: evidence.json says "passed", the journal gives "failed""#,
        "requirements[0].met: evidence.json says true, the journal gives false",
        "requirements[0].succeeded: evidence.json says 2, the journal gives 1",
    ] {
        assert!(
            checked.stderr.contains(named),
            "{named}: {}",
            checked.stderr
        );
    }
    let refused = ppcert(dir.path(), &["report", bundle.to_str().unwrap()], None).await;
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("refusing to re-render"));
    assert_eq!(
        std::fs::read(bundle.join("report.html")).unwrap(),
        html_before,
        "nothing re-rendered"
    );
    let html = String::from_utf8_lossy(&html_before);
    assert!(html.contains(r#"id="verdict">FAILED<"#) && !html.contains(r#"id="verdict">PASSED<"#));
}

/// The reports a run wrote are those `report` renders again from its evidence.json, byte for
/// byte: a small run renders report.html's exchange blocks while it goes on, and a block
/// rendered then must read as one rendered at the end (a failed run's blocks open, too).
#[tokio::test]
async fn a_run_s_reports_are_the_ones_report_renders_again() {
    for (name, (dir, bundle)) in [
        ("the default batch", default_bundle().await),
        ("a failed run", failed_bundle().await),
    ] {
        let read = |file: &str| std::fs::read(bundle.join(file)).unwrap();
        let written = ["report.html", "report.md", "junit.xml"].map(read);
        let rendered = ppcert(dir.path(), &["report", bundle.to_str().unwrap()], None).await;
        assert_eq!(rendered.code, 0, "{name}: {}", rendered.stderr);
        let again = ["report.html", "report.md", "junit.xml"].map(read);
        for (file, (a, b)) in ["report.html", "report.md", "junit.xml"]
            .iter()
            .zip(written.iter().zip(again.iter()))
        {
            assert!(a == b, "{name}: {file} differs when rendered again");
        }
        let html = String::from_utf8_lossy(&written[0]);
        assert!(html.contains(r#"<details class="exchange""#), "{name}");
    }
}

/// The default batch, finished, in a fresh directory.
async fn default_bundle() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert(dir.path(), &["run", "--out", "b", "--seed", "3"], None).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let out = dir.path().join("b");
    (dir, out)
}

/// `report` renders the verdict the journal gives: a failed run re-renders failed.
#[tokio::test]
async fn report_renders_the_verdict_the_journal_gives() {
    let (dir, bundle) = failed_bundle().await;
    std::fs::remove_file(bundle.join("report.md")).unwrap();
    let rendered = ppcert(dir.path(), &["report", bundle.to_str().unwrap()], None).await;
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    let markdown = std::fs::read_to_string(bundle.join("report.md")).unwrap();
    assert!(markdown.contains("FAILED"), "{markdown}");
    assert_eq!(verify(dir.path(), &bundle).await.code, 0);
}

fn append_to_manifest(bundle: &Path, line: &str) {
    let path = bundle.join("MANIFEST.sha256");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(line);
    std::fs::write(path, text).unwrap();
}

/// Each way to slip something into a bundle, and what verify says of it. None of them may
/// verify, and `report` re-renders none of them.
#[tokio::test]
async fn every_file_set_tampering_fails_verify() {
    use std::os::unix::ffi::OsStrExt;
    let (dir, pristine) = bundle().await;
    let first_line = std::fs::read_to_string(pristine.join("MANIFEST.sha256"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    type Tamper = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Tamper, &str)> = vec![
        (
            "partial",
            Box::new(|b| std::fs::write(b.join("evidence.json.partial"), "{}").unwrap()),
            "evidence.json.partial: not in the manifest",
        ),
        (
            "subdirectory",
            Box::new(|b| {
                std::fs::create_dir(b.join("extra")).unwrap();
                std::fs::write(b.join("extra/report.html"), "<p>PASSED</p>").unwrap();
            }),
            "extra (a directory): not in the manifest",
        ),
        (
            "listed symlink",
            Box::new(|b| {
                let target = b.parent().unwrap().join("elsewhere.md");
                std::fs::rename(b.join("report.md"), &target).unwrap();
                std::os::unix::fs::symlink(&target, b.join("report.md")).unwrap();
            }),
            "report.md: a symbolic link",
        ),
        (
            "unlisted symlink",
            Box::new(|b| std::os::unix::fs::symlink("evidence.json", b.join("e.json")).unwrap()),
            "e.json (a symbolic link): not in the manifest",
        ),
        (
            "non-UTF-8 name",
            Box::new(|b| {
                let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
                std::fs::write(b.join(name), "x").unwrap();
            }),
            "a name that is not UTF-8",
        ),
        (
            "duplicated line",
            Box::new(move |b| append_to_manifest(b, &format!("{first_line}\n"))),
            "is listed twice",
        ),
        (
            "malformed line",
            Box::new(|b| append_to_manifest(b, "not a line\n")),
            "not a `<sha256 in lowercase hex>  <file>` line",
        ),
    ];
    for (i, (name, tamper, said)) in cases.iter().enumerate() {
        let bundle = dir.path().join(format!("copy{i}"));
        copy_dir(&pristine, &bundle);
        assert_eq!(verify(dir.path(), &bundle).await.code, 0, "{name}: copy");
        tamper(&bundle);
        let checked = verify(dir.path(), &bundle).await;
        assert_eq!(checked.code, 1, "{name}: {}", checked.stdout);
        assert!(checked.stderr.contains(said), "{name}: {}", checked.stderr);
        let report = ppcert(dir.path(), &["report", bundle.to_str().unwrap()], None).await;
        assert_eq!(
            report.code, 1,
            "{name}: report re-rendered: {}",
            report.stderr
        );
    }
}

/// Lowering what a built-in scenario requires, in the journal and the record alike and both
/// re-hashed, is caught: the built-in scenario's text (same SHA-256) says otherwise.
#[tokio::test]
async fn requirements_edited_in_the_journal_and_the_record_are_caught() {
    let (dir, bundle) = bundle().await;
    for (name, from, to) in [
        ("journal.jsonl", r#""required":1"#, r#""required":0"#),
        ("evidence.json", r#""required": 1"#, r#""required": 0"#),
    ] {
        let path = bundle.join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{name}");
        std::fs::write(&path, text.replace(from, to)).unwrap();
        rehash(&bundle, name);
    }
    let checked = verify(dir.path(), &bundle).await;
    assert_eq!(checked.code, 1, "{}", checked.stdout);
    assert!(
        checked.stderr.contains("the journal was edited"),
        "{}",
        checked.stderr
    );
}

//! The package handed to a provider: `ppcert package` writes one `.tar.gz`; `ppcert verify`
//! checks it without unpacking it, and refuses an archive built to escape (`..`, absolute paths, links,
//! duplicates, nesting).

use std::path::Path;

use crate::attest::{signed_run, verify_with};
use crate::common::*;

#[tokio::test]
async fn a_package_verifies_without_being_unpacked() {
    let (dir, bundle, public) = signed_run().await;
    let packed = ppcert(dir.path(), &["package", "b"], None).await;
    assert_eq!(packed.code, 0, "{}", packed.stderr);
    let archive = dir.path().join("b.tar.gz");
    assert!(archive.is_file());
    let before: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let checked = verify_with(dir.path(), &archive, &public).await;
    assert_eq!(checked.code, 0, "{}", checked.stderr);
    assert!(
        checked.stdout.contains("signed: by the key"),
        "{}",
        checked.stdout
    );
    let after: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "nothing unpacked");
    // The archive holds the bundle's files and the attestation, under one directory.
    let mut names = Vec::new();
    let file = std::fs::File::open(&archive).unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for entry in tar.entries().unwrap() {
        names.push(entry.unwrap().path().unwrap().display().to_string());
    }
    assert!(
        names.contains(&"b/attestation.intoto.json".to_string()),
        "{names:?}"
    );
    assert_eq!(
        names.len(),
        std::fs::read_dir(&bundle).unwrap().count() + 1,
        "{names:?}"
    );
    let again = ppcert(dir.path(), &["package", "b"], None).await;
    assert_eq!(again.code, 2, "never overwrites");
}

/// An archive entry from raw bytes: tar's own builder refuses the hostile paths.
fn raw_entry(tar: &mut tar::Builder<Vec<u8>>, path: &[u8], kind: tar::EntryType, data: &[u8]) {
    let mut header = tar::Header::new_gnu();
    header.as_old_mut().name[..path.len()].copy_from_slice(path);
    header.set_entry_type(kind);
    header.set_mode(0o644);
    header.set_size(data.len() as u64);
    if kind == tar::EntryType::Symlink {
        header.set_link_name("evidence.json").unwrap();
    }
    header.set_cksum();
    tar.append(&header, data).unwrap();
}

/// `bundle`'s files under `b/` in name order, each passed through `edit`, then `extra` entries,
/// gzipped into `archive`.
fn pack_as(
    bundle: &Path,
    archive: &Path,
    edit: impl Fn(&str, &mut Vec<u8>),
    extra: &[(&[u8], tar::EntryType)],
) {
    let mut tar = tar::Builder::new(Vec::new());
    let mut names: Vec<_> = std::fs::read_dir(bundle)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for name in names {
        let mut bytes = std::fs::read(bundle.join(&name)).unwrap();
        edit(&name, &mut bytes);
        let entry = format!("b/{name}");
        raw_entry(&mut tar, entry.as_bytes(), tar::EntryType::Regular, &bytes);
    }
    for (path, kind) in extra {
        raw_entry(&mut tar, path, *kind, b"x");
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar.into_inner().unwrap()).unwrap();
    std::fs::write(archive, gz.finish().unwrap()).unwrap();
}

#[tokio::test]
async fn a_hostile_package_is_refused_and_nothing_escapes() {
    let (dir, bundle, public) = signed_run().await;
    let cases: [(&[u8], tar::EntryType, &str); 5] = [
        (b"b/../escaped", tar::EntryType::Regular, "a path with `..`"),
        (
            b"/tmp/ppcert-absolute",
            tar::EntryType::Regular,
            "an absolute",
        ),
        (
            b"b/link",
            tar::EntryType::Symlink,
            "link (a symbolic link): not in the manifest",
        ),
        (
            b"b/report.md",
            tar::EntryType::Regular,
            "a second entry of that name",
        ),
        (
            b"b/sub/report.html",
            tar::EntryType::Regular,
            "deeper than the bundle's directory",
        ),
    ];
    for (i, (path, kind, said)) in cases.iter().enumerate() {
        let archive = dir.path().join(format!("hostile{i}.tar.gz"));
        pack_as(&bundle, &archive, |_, _| {}, &[(path, *kind)]);
        let checked = verify_with(dir.path(), &archive, &public).await;
        assert_eq!(checked.code, 1, "{said}: {}", checked.stdout);
        assert!(checked.stderr.contains(said), "{said}: {}", checked.stderr);
    }
    assert!(!dir.path().join("escaped").exists() && !Path::new("/tmp/ppcert-absolute").exists());
    // An archive that is not one does not verify (1); a path that is not there is a usage
    // error (2).
    let garbage = dir.path().join("garbage.tar.gz");
    std::fs::write(&garbage, b"not gzip at all").unwrap();
    let checked = verify_with(dir.path(), &garbage, &public).await;
    assert_eq!(checked.code, 1, "{}", checked.stderr);
    assert!(
        checked.stderr.contains("not a readable .tar.gz"),
        "{}",
        checked.stderr
    );
    let missing = verify_with(dir.path(), &dir.path().join("nowhere.tar.gz"), &public).await;
    assert_eq!(missing.code, 2, "{}", missing.stderr);
}

/// A package's large files are not kept in memory but read again from the archive: a byte
/// changed in the middle of the journal (larger than what is kept) is still found, and the
/// untouched package still verifies from the same reading.
#[tokio::test]
async fn a_changed_byte_in_a_large_packed_file_is_found_when_it_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = crate::attest::keygen(dir.path(), "key").await;
    let signed = ppcert(
        dir.path(),
        &["run", "--out", "b", "--sign-key", "key"],
        None,
    )
    .await;
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    let bundle = dir.path().join("b");
    let journal = std::fs::read(bundle.join("journal.jsonl")).unwrap();
    assert!(
        journal.len() > 64 << 10,
        "the journal is read again, not kept"
    );
    let pack = |name: &str, changed: bool| {
        let archive = dir.path().join(name);
        let edit = |file: &str, bytes: &mut Vec<u8>| {
            if changed && file == "journal.jsonl" {
                let half = bytes.len() / 2;
                let middle = half + (0..).find(|i| bytes[half + i] == b'"').unwrap() + 1;
                bytes[middle] = if bytes[middle] == b'x' { b'y' } else { b'x' };
            }
        };
        pack_as(&bundle, &archive, edit, &[]);
        archive
    };
    let intact = verify_with(dir.path(), &pack("intact.tar.gz", false), &public).await;
    assert_eq!(intact.code, 0, "{}{}", intact.stdout, intact.stderr);
    let changed = verify_with(dir.path(), &pack("changed.tar.gz", true), &public).await;
    assert_eq!(changed.code, 1, "{}", changed.stdout);
    let said = format!("{}{}", changed.stdout, changed.stderr);
    assert!(said.contains("journal.jsonl"), "{said}");
}

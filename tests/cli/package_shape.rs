//! What `tar xzf` or `tar -i` would extract from a package must be what `verify` checked:
//! one gzip member, nothing after it or after the end-of-archive blocks, and bounds on its
//! size and entry count that a forged archive cannot talk past.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::attest::{signed_run, verify_with};
use crate::common::*;

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// A tar archive (end blocks included) of one file `b/report.html` saying `forged`.
fn forged_report() -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_ustar();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_mode(0o644);
    header.set_size(6);
    tar.append_data(&mut header, "b/report.html", &b"forged"[..])
        .unwrap();
    tar.into_inner().unwrap()
}

/// A signed run packed by `ppcert package`: the directory, the package and the public key.
async fn packed() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (dir, _, public) = signed_run().await;
    let packed = ppcert(dir.path(), &["package", "b"], None).await;
    assert_eq!(packed.code, 0, "{}", packed.stderr);
    let archive = dir.path().join("b.tar.gz");
    (dir, archive, public)
}

async fn refused(dir: &Path, name: &str, bytes: &[u8], public: &Path, said: &str) {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let checked = verify_with(dir, &path, public).await;
    assert_eq!(checked.code, 1, "{name}: {}", checked.stdout);
    assert!(
        checked.stderr.contains(said),
        "{name}: wanted `{said}` in {}",
        checked.stderr
    );
}

#[tokio::test]
async fn nothing_tar_would_extract_goes_unchecked() {
    let (dir, archive, public) = packed().await;
    let original = std::fs::read(&archive).unwrap();
    // What `ppcert package` writes is exactly the shape verify accepts: one gzip member, the
    // tar stream ending with its two zero blocks.
    let mut one = Vec::new();
    flate2::read::GzDecoder::new(original.as_slice())
        .read_to_end(&mut one)
        .unwrap();
    let mut all = Vec::new();
    flate2::read::MultiGzDecoder::new(original.as_slice())
        .read_to_end(&mut all)
        .unwrap();
    assert_eq!(one, all, "one gzip member");
    assert!(one.len() % 512 == 0 && one.ends_with(&[0; 1024]));
    // A second gzip member whose report.html `tar xzf` would write over the signed one.
    let second = [original.clone(), gz(&forged_report())].concat();
    refused(
        dir.path(),
        "second.tar.gz",
        &second,
        &public,
        "second gzip member",
    )
    .await;
    let trailing = [original.clone(), b"trailing bytes".to_vec()].concat();
    refused(
        dir.path(),
        "trailing.tar.gz",
        &trailing,
        &public,
        "14 bytes after the gzip stream",
    )
    .await;
    // Entries after the end-of-archive blocks, inside the one member (`tar -i` reads them).
    let after_end = gz(&[one.clone(), forged_report()].concat());
    refused(
        dir.path(),
        "after-end.tar.gz",
        &after_end,
        &public,
        "data after the tar end-of-archive blocks",
    )
    .await;
    // Zero padding to the 10 KiB record is what GNU tar writes; still accepted.
    let padded = [one.clone(), vec![0; 10_240 - one.len() % 10_240]].concat();
    let path = dir.path().join("padded.tar.gz");
    std::fs::write(&path, gz(&padded)).unwrap();
    let checked = verify_with(dir.path(), &path, &public).await;
    assert_eq!(checked.code, 0, "{}", checked.stderr);
    // Truncated before its end blocks.
    let truncated = gz(&one[..one.len() - 1024]);
    refused(
        dir.path(),
        "truncated.tar.gz",
        &truncated,
        &public,
        "does not end with its two zero blocks",
    )
    .await;
}

/// Raw deflate of `bytes`, flushed so that it ends on a byte boundary with no reference to
/// what came before: copies of it can follow one another.
fn deflate_flushed(compress: &mut flate2::Compress, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() / 100 + 4096);
    let before = compress.total_in();
    compress
        .compress_vec(bytes, &mut out, flate2::FlushCompress::Full)
        .unwrap();
    assert_eq!(
        compress.total_in() - before,
        bytes.len() as u64,
        "all taken"
    );
    out
}

#[tokio::test]
async fn a_decompression_bomb_is_refused_at_its_header_without_being_inflated() {
    let (dir, _, public) = signed_run().await;
    // 4 GiB of zeros as b/journal.jsonl in about 4 MB: a gzip header, the tar header, then one
    // flushed deflate chunk of 1 MiB of zeros repeated 4,095 times (no trailer: never reached).
    let mut header = tar::Header::new_ustar();
    header.set_path("b/journal.jsonl").unwrap();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_mode(0o644);
    header.set_size((4u64 << 30) - (1 << 20));
    header.set_cksum();
    let mut compress = flate2::Compress::new(flate2::Compression::best(), false);
    let mut bomb = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    bomb.extend(deflate_flushed(&mut compress, header.as_bytes()));
    let chunk = deflate_flushed(&mut compress, &vec![0; 1 << 20]);
    for _ in 0..4095 {
        bomb.extend_from_slice(&chunk);
    }
    assert!(bomb.len() < 16 << 20, "{}", bomb.len());
    refused(
        dir.path(),
        "bomb.tar.gz",
        &bomb,
        &public,
        "more than 512 MiB of files",
    )
    .await;
}

#[tokio::test]
async fn a_package_of_120k_empty_members_is_refused_at_the_member_bound() {
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = crate::attest::keygen(dir.path(), "key").await;
    let mut tar = tar::Builder::new(Vec::new());
    for i in 0..120_000 {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(0o644);
        header.set_size(0);
        tar.append_data(&mut header, format!("b/e{i}"), std::io::empty())
            .unwrap();
    }
    let archive = gz(&tar.into_inner().unwrap());
    refused(
        dir.path(),
        "many.tar.gz",
        &archive,
        &public,
        "more than 10000 entries",
    )
    .await;
}

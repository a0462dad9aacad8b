//! SHA-256 as lowercase hex: of a scenario's text, a token's fingerprint, a delivery without
//! an id, and each file of a bundle. One leaf module, so none of those users imports another.

use std::path::Path;

use sha2::{Digest, Sha256};

/// Lower-case hex, two digits a byte, into one string (not a string per byte).
pub(crate) fn hex(digest: &[u8]) -> String {
    let mut text = String::with_capacity(digest.len() * 2);
    for byte in digest {
        for digit in [byte >> 4, byte & 0x0f] {
            text.push(char::from_digit(u32::from(digit), 16).unwrap_or('0'));
        }
    }
    text
}

/// By ring's SHA-256 (already built for TLS): on a 1 MiB body, which the proxy hashes for
/// each one it keeps cut, it was a little quicker than the `sha2` crate's (BENCHMARKS.md,
/// issue 45). The digest is the same.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, bytes).as_ref())
}

/// The SHA-256 of a file, read through a buffer: a large run's journal and evidence are
/// hundreds of megabytes, never held whole to be hashed.
pub fn file_sha256_hex(path: &Path) -> std::io::Result<String> {
    read_sha256_hex(std::fs::File::open(path)?)
}

/// The SHA-256 of everything `reader` gives, read through a buffer.
pub(crate) fn read_sha256_hex(mut reader: impl std::io::Read) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    std::io::copy(&mut reader, &mut hasher)?;
    Ok(hex(&hasher.finalize()))
}

/// A writer that hashes what it passes on: a file's digest taken as it is written, not by
/// reading the file back (a run's end lists every file of its bundle in the manifest).
pub(crate) struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
}

impl<W: std::io::Write> HashingWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Sha256::new(),
        }
    }

    /// The writer back, and the SHA-256 (lower-case hex) of everything it took.
    pub(crate) fn finish(self) -> (W, String) {
        (self.inner, hex(&self.hasher.finalize()))
    }
}

impl<W: std::io::Write> std::io::Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.hasher.update(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_files_hash_to_the_published_digest() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b"abc"), abc);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "abc").unwrap();
        assert_eq!(file_sha256_hex(&path).unwrap(), abc);
    }

    /// A writer that takes its input a little at a time hashes exactly what it wrote.
    #[test]
    fn a_hashing_writer_hashes_what_it_wrote() {
        struct Trickle(Vec<u8>);
        impl std::io::Write for Trickle {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                let n = buf.len().min(3);
                self.0.extend_from_slice(&buf[..n]);
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut writer = HashingWriter::new(Trickle(Vec::new()));
        std::io::Write::write_all(&mut writer, b"the bundle's file").unwrap();
        let (written, digest) = writer.finish();
        assert_eq!(written.0, b"the bundle's file");
        assert_eq!(digest, sha256_hex(b"the bundle's file"));
    }

    /// The digests recorded stay those of before: ring's and sha2's agree on a body of a
    /// megabyte, as on every length around a block's.
    #[test]
    fn ring_and_sha2_give_the_same_digest() {
        let body: Vec<u8> = (0..(1usize << 20) + 7).map(|i| (i % 253) as u8).collect();
        for len in [0, 55, 56, 63, 64, 65, 16 * 1024 + 1, body.len()] {
            assert_eq!(sha256_hex(&body[..len]), hex(&Sha256::digest(&body[..len])));
        }
    }
}

//! Where a package's file is kept once its archive was checked: a small file in memory, a large
//! one as its place in the decompressed stream, inflated again each time it is read, so that
//! checking a package costs buffers, not its size (issue 45: the evidence tools stream).

use std::io::{BufRead, Read};
use std::sync::Arc;

use super::shape::Bounded;

/// Files up to this size are kept in memory when the archive is read, until [`KEPT_TOTAL`] is
/// reached; the others are read again from the package when asked for.
pub(crate) const KEPT_BYTES: u64 = 64 << 10;
/// What all the kept files together may hold: many small files cost no more than a few large.
pub(crate) const KEPT_TOTAL: u64 = 8 << 20;

/// The package's compressed bytes, kept open for reading again: the file (held open, so a
/// package renamed or replaced after the check is not the one read) or the bytes a dossier
/// holds.
#[derive(Clone)]
pub(crate) enum Origin {
    File(Arc<std::fs::File>),
    Bytes(Arc<[u8]>),
}

/// One file of a package.
pub(crate) enum Stored {
    Kept(Vec<u8>),
    /// Where its bytes start in the decompressed stream, and how many there are.
    At {
        offset: u64,
        size: u64,
    },
}

impl Stored {
    /// The file's bytes, read through a buffer.
    pub(crate) fn reader<'a>(&'a self, origin: &Origin) -> std::io::Result<Box<dyn BufRead + 'a>> {
        match self {
            Stored::Kept(bytes) => Ok(Box::new(bytes.as_slice())),
            Stored::At { offset, size } => {
                let compressed = std::io::BufReader::new(Positional {
                    origin: origin.clone(),
                    at: 0,
                });
                let mut inflated = Bounded::new(flate2::bufread::GzDecoder::new(compressed));
                let skipped =
                    std::io::copy(&mut (&mut inflated).take(*offset), &mut std::io::sink())?;
                if skipped != *offset {
                    return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
                }
                Ok(Box::new(std::io::BufReader::new(inflated.take(*size))))
            }
        }
    }
}

/// Reads the origin from its own position, so that two readers of one package (the journal read
/// twice by `verify`) never move each other.
struct Positional {
    origin: Origin,
    at: u64,
}

impl Read for Positional {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match &self.origin {
            Origin::Bytes(bytes) => {
                let start = usize::try_from(self.at)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                let rest = &bytes[start..];
                let n = rest.len().min(buf.len());
                buf[..n].copy_from_slice(&rest[..n]);
                n
            }
            Origin::File(file) => read_at(file, buf, self.at)?,
        };
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attest::shape::tests::gz;

    fn read_all(stored: &Stored, origin: &Origin) -> Vec<u8> {
        let mut out = Vec::new();
        stored
            .reader(origin)
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn a_file_read_again_is_its_slice_of_the_stream_from_bytes_or_from_a_file() {
        let stream: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
        let stored = Stored::At {
            offset: 70_001,
            size: 400_000,
        };
        let bytes = Origin::Bytes(gz(&stream).into());
        assert_eq!(read_all(&stored, &bytes), &stream[70_001..470_001]);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.tar.gz");
        std::fs::write(&path, gz(&stream)).unwrap();
        let file = Origin::File(Arc::new(std::fs::File::open(&path).unwrap()));
        // Two readers at once, interleaved: each keeps its own place in the file.
        let (mut a, mut b) = (stored.reader(&file).unwrap(), stored.reader(&file).unwrap());
        let (mut first, mut second) = (vec![0u8; 1000], vec![0u8; 1000]);
        a.read_exact(&mut first).unwrap();
        b.read_exact(&mut second).unwrap();
        assert_eq!(first, second);
        assert_eq!(first, &stream[70_001..71_001]);
    }

    #[test]
    fn a_stream_shorter_than_the_place_recorded_is_an_error_not_short_bytes() {
        let stored = Stored::At {
            offset: 10_000,
            size: 5,
        };
        let origin = Origin::Bytes(gz(&[7u8; 100]).into());
        assert!(stored.reader(&origin).is_err());
    }
}

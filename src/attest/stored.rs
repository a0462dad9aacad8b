//! Where a package's file is kept once its archive was checked: a small file in memory, a large
//! one as its place in the decompressed stream, inflated from where the last read of the
//! package ended (or from the start, for a file before it), so that checking a package costs
//! buffers, not its size (issue 45: the evidence tools stream), and about one pass over it:
//! files are read in name order, the order the archive holds them in.

use std::io::{BufRead, Read};
use std::sync::{Arc, Mutex};

use super::shape::Bounded;

/// Files up to this size are kept in memory when the archive is read, until [`KEPT_TOTAL`] is
/// reached; the others are read again from the package when asked for.
pub(crate) const KEPT_BYTES: u64 = 64 << 10;
/// What all the kept files together may hold: many small files cost no more than a few large.
pub(crate) const KEPT_TOTAL: u64 = 8 << 20;

/// The package's compressed bytes, kept open for reading again, and the decompressor the last
/// read left where it ended.
#[derive(Clone)]
pub(crate) struct Origin {
    source: Source,
    parked: Arc<Mutex<Option<Parked>>>,
    /// Decompressed bytes passed over so far to reach the files read.
    skipped: Arc<std::sync::atomic::AtomicU64>,
}

/// What reading a package's files may pass over in all: a few passes over the most a package
/// may hold (512 MiB, docs/security.md). Files read in the archive's order pass over each byte
/// once; a package whose large files lie in another order than their names' would otherwise
/// be inflated again from its start for each one.
const SKIPPED_MOST: u64 = 16 * (512 << 20);

/// The file (held open, so a package renamed or replaced after the check is not the one read)
/// or the bytes a dossier holds.
#[derive(Clone)]
enum Source {
    File(Arc<std::fs::File>),
    Bytes(Arc<[u8]>),
}

type Inflater = Bounded<flate2::bufread::GzDecoder<std::io::BufReader<Positional>>>;

/// A decompressor and how far into the decompressed stream it is.
struct Parked {
    inflater: Inflater,
    at: u64,
}

impl Origin {
    pub(crate) fn file(file: Arc<std::fs::File>) -> Origin {
        Origin::of(Source::File(file))
    }

    pub(crate) fn bytes(bytes: Arc<[u8]>) -> Origin {
        Origin::of(Source::Bytes(bytes))
    }

    fn of(source: Source) -> Origin {
        Origin {
            source,
            parked: Arc::default(),
            skipped: Arc::default(),
        }
    }

    /// A decompressor at `offset`: the parked one when it is not past it, else a new one.
    fn inflater_at(&self, offset: u64) -> std::io::Result<Inflater> {
        let parked = (self.parked.lock().unwrap_or_else(|e| e.into_inner())).take();
        let (mut inflater, at) = match parked.filter(|p| p.at <= offset) {
            Some(Parked { inflater, at }) => (inflater, at),
            None => {
                let compressed = std::io::BufReader::new(Positional {
                    source: self.source.clone(),
                    at: 0,
                });
                (Bounded::new(flate2::bufread::GzDecoder::new(compressed)), 0)
            }
        };
        let passed = (self.skipped).fetch_add(offset - at, std::sync::atomic::Ordering::Relaxed);
        if passed + (offset - at) > SKIPPED_MOST {
            return Err(std::io::Error::other(format!(
                "reading its files would inflate the package more than {} GiB over: its files are not in the order of their names",
                SKIPPED_MOST >> 30
            )));
        }
        let skipped = std::io::copy(&mut (&mut inflater).take(offset - at), &mut std::io::sink())?;
        if skipped != offset - at {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
        }
        Ok(inflater)
    }
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
            Stored::At { offset, size } => Ok(Box::new(std::io::BufReader::new(Lent {
                inflater: Some(origin.inflater_at(*offset)?),
                at: *offset,
                left: *size,
                parked: origin.parked.clone(),
            }))),
        }
    }
}

/// A decompressor lent to one file's reader: it reads the file's bytes only, and is parked
/// where it stopped when the reader is dropped, for the next file.
struct Lent {
    inflater: Option<Inflater>,
    at: u64,
    left: u64,
    parked: Arc<Mutex<Option<Parked>>>,
}

impl Read for Lent {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(inflater) = self.inflater.as_mut() else {
            return Ok(0);
        };
        let most = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = inflater.read(&mut buf[..most])?;
        self.at += n as u64;
        self.left -= n as u64;
        Ok(n)
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(inflater) = self.inflater.take() {
            let parked = Parked {
                inflater,
                at: self.at,
            };
            *self.parked.lock().unwrap_or_else(|e| e.into_inner()) = Some(parked);
        }
    }
}

/// Reads the source from its own position, so that two readers of one package (the journal
/// read twice by `verify`) never move each other.
struct Positional {
    source: Source,
    at: u64,
}

impl Read for Positional {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match &self.source {
            Source::Bytes(bytes) => {
                let start = usize::try_from(self.at)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                let rest = &bytes[start..];
                let n = rest.len().min(buf.len());
                buf[..n].copy_from_slice(&rest[..n]);
                n
            }
            Source::File(file) => read_at(file, buf, self.at)?,
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
        let bytes = Origin::bytes(gz(&stream).into());
        assert_eq!(read_all(&stored, &bytes), &stream[70_001..470_001]);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.tar.gz");
        std::fs::write(&path, gz(&stream)).unwrap();
        let file = Origin::file(Arc::new(std::fs::File::open(&path).unwrap()));
        // Two readers at once, interleaved: each keeps its own place in the file.
        let (mut a, mut b) = (stored.reader(&file).unwrap(), stored.reader(&file).unwrap());
        let (mut first, mut second) = (vec![0u8; 1000], vec![0u8; 1000]);
        a.read_exact(&mut first).unwrap();
        b.read_exact(&mut second).unwrap();
        assert_eq!(first, second);
        assert_eq!(first, &stream[70_001..71_001]);
    }

    /// Files read in the archive's order go on from where the last read ended, so a package
    /// of many large files is inflated about once, not once per file; a file before that
    /// point is read from the start again, and every file reads its own bytes.
    #[test]
    fn each_read_goes_on_from_where_the_last_one_ended() {
        let stream: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
        let origin = Origin::bytes(gz(&stream).into());
        let parked_at = || (origin.parked.lock().unwrap().as_ref()).map(|p| p.at);
        let files = [(100, 10), (70_000, 5), (200_000, 1000)];
        for (offset, size) in files.iter().chain(&files[..1]) {
            let stored = Stored::At {
                offset: *offset,
                size: *size,
            };
            let bytes = read_all(&stored, &origin);
            assert_eq!(bytes, &stream[*offset as usize..(*offset + *size) as usize]);
            assert_eq!(
                parked_at(),
                Some(offset + size),
                "parked where the file ends"
            );
        }
        // Reading the later files took the parked decompressor: none was left behind.
        let stored = Stored::At {
            offset: 200_000,
            size: 10,
        };
        let reader = stored.reader(&origin).unwrap();
        assert_eq!(parked_at(), None, "lent out");
        drop(reader);
        assert_eq!(parked_at(), Some(200_000));
    }

    #[test]
    fn a_stream_shorter_than_the_place_recorded_is_an_error_not_short_bytes() {
        let stored = Stored::At {
            offset: 10_000,
            size: 5,
        };
        let origin = Origin::bytes(gz(&[7u8; 100]).into());
        assert!(stored.reader(&origin).is_err());
    }
}

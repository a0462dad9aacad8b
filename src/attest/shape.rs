//! The shape `tar xzf` and `tar -i` would read beyond what `verify` checked: one gzip member
//! and nothing after it, nothing after the tar end-of-archive blocks but zero padding to the
//! record size, and a decompressed stream no longer than ppcert's bound.

use std::io::{BufRead, Read};

use crate::bounds::PACKAGE_UNPACKED_BYTES;

/// A tar block; the end of an archive is two zero blocks.
const BLOCK: u64 = 512;
/// GNU tar's default record (20 blocks): the end may be padded with zeros up to a multiple.
const RECORD: u64 = 10_240;

/// An archive that is not exactly one gzip member holding one tar archive.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ShapeError {
    #[error(
        "decompresses to more than {} MiB (ppcert's bound on a package): refused before inflating the rest",
        PACKAGE_UNPACKED_BYTES >> 20
    )]
    Unpacked,
    #[error(
        "a second gzip member after the first: `tar xzf` would extract what it holds, unchecked"
    )]
    SecondMember,
    #[error("{0} bytes after the gzip stream")]
    AfterGzip(u64),
    #[error(
        "the tar archive does not end with its two zero blocks (truncated, or not written by ppcert package)"
    )]
    NoEnd,
    #[error("data after the tar end-of-archive blocks: `tar -i` would extract it, unchecked")]
    AfterEnd,
}

/// The decompressed stream, counted, and refused past [`PACKAGE_UNPACKED_BYTES`] without
/// inflating more: a bomb costs ppcert one buffer, never its size.
pub(crate) struct Bounded<R> {
    inner: R,
    read: u64,
}

impl<R> Bounded<R> {
    pub(crate) fn new(inner: R) -> Self {
        Bounded { inner, read: 0 }
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read > PACKAGE_UNPACKED_BYTES {
            return Err(std::io::Error::other(ShapeError::Unpacked));
        }
        let room = usize::try_from(PACKAGE_UNPACKED_BYTES + 1 - self.read).unwrap_or(usize::MAX);
        let limit = buf.len().min(room);
        let n = self.inner.read(&mut buf[..limit])?;
        self.read += n as u64;
        if self.read > PACKAGE_UNPACKED_BYTES {
            return Err(std::io::Error::other(ShapeError::Unpacked));
        }
        Ok(n)
    }
}

/// After tar stopped at the first zero block (or at the stream's end): the rest of the
/// decompressed stream must be the second zero block and at most zero padding to the record,
/// the gzip stream must end there, and the file with it.
pub(crate) fn nothing_after<B: BufRead>(
    mut rest: Bounded<flate2::bufread::GzDecoder<B>>,
) -> Result<(), ShapeError> {
    let stopped_at = rest.read;
    // tar read the first zero block; the second and any padding follow.
    let allowed = (stopped_at + BLOCK).div_ceil(RECORD) * RECORD - stopped_at;
    let mut tail = 0u64;
    let mut buf = [0u8; 8192];
    loop {
        let n = match rest.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Err(ShapeError::AfterEnd),
        };
        if n == 0 {
            break;
        }
        tail += n as u64;
        if tail > allowed || buf[..n].iter().any(|b| *b != 0) {
            return Err(ShapeError::AfterEnd);
        }
    }
    if tail < BLOCK {
        return Err(ShapeError::NoEnd);
    }
    let mut file = rest.inner.into_inner();
    let after = file.fill_buf().map_err(|_| ShapeError::AfterGzip(0))?;
    if after.starts_with(&[0x1f, 0x8b]) {
        return Err(ShapeError::SecondMember);
    }
    let mut extra = after.len() as u64;
    if extra > 0 {
        let consumed = after.len();
        file.consume(consumed);
        extra += std::io::copy(&mut file.take(1 << 20), &mut std::io::sink()).unwrap_or(0);
        return Err(ShapeError::AfterGzip(extra));
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::io::Write;

    /// `bytes` gzip-compressed, for the package readers' tests.
    pub(in crate::attest) fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// As tar leaves it: `stopped` bytes read, the first zero block among them.
    fn after(stopped: usize, archive: &[u8]) -> Result<(), ShapeError> {
        let mut reader = Bounded::new(flate2::bufread::GzDecoder::new(archive));
        std::io::copy(
            &mut (&mut reader).take(stopped as u64),
            &mut std::io::sink(),
        )
        .unwrap();
        nothing_after(reader)
    }

    #[test]
    fn only_the_end_blocks_and_zero_padding_may_follow_the_last_entry() {
        let body = vec![1u8; 1024];
        let with = |tail: &[u8]| [body.as_slice(), &[0; 512], tail].concat();
        assert!(after(1536, &gz(&with(&[0; 512]))).is_ok());
        assert!(after(1536, &gz(&with(&vec![0; 10_240 - 1536]))).is_ok());
        assert!(matches!(
            after(1536, &gz(&with(&[]))),
            Err(ShapeError::NoEnd)
        ));
        let past_record = vec![0; 10_240 - 1536 + 512];
        assert!(matches!(
            after(1536, &gz(&with(&past_record))),
            Err(ShapeError::AfterEnd)
        ));
        let entry_after = [[0u8; 512].as_slice(), b"b/report.html"].concat();
        assert!(matches!(
            after(1536, &gz(&with(&entry_after))),
            Err(ShapeError::AfterEnd)
        ));
    }

    #[test]
    fn one_gzip_member_and_nothing_after_it() {
        let archive = [vec![7u8; 512], vec![0; 1024]].concat();
        let one = gz(&archive);
        assert!(after(1024, &one).is_ok());
        let two = [one.clone(), gz(b"forged")].concat();
        assert!(matches!(after(1024, &two), Err(ShapeError::SecondMember)));
        let trailing = [one, b"junk".to_vec()].concat();
        assert!(matches!(
            after(1024, &trailing),
            Err(ShapeError::AfterGzip(4))
        ));
    }
}

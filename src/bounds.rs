//! One set of bounds for every value a user can set, whichever way they set it (flag,
//! `ppcert.toml`, scenario file): clap's parsers and the file checks both read them here, so
//! `retries = 1000` in a file is refused exactly as `--retries 1000` is.

use std::ops::RangeInclusive;

/// Flows in flight at once.
pub(crate) const CONCURRENCY: RangeInclusive<i64> = 1..=1024;
/// Attempts after the first, for retryable failures.
pub(crate) const RETRIES: RangeInclusive<i64> = 0..=20;
/// Seconds per request.
pub(crate) const TIMEOUT_SECS: RangeInclusive<u64> = 1..=3600;
/// Multiplier of every flow's repeat count.
pub(crate) const SCALE: RangeInclusive<i64> = 1..=10_000;
/// A flow's repeat count in a scenario.
pub(crate) const REPEAT: RangeInclusive<u32> = 1..=10_000;
/// How far ahead the first departure is (the sandbox's calendar reaches some years ahead).
pub(crate) const DAYS_AHEAD: RangeInclusive<u32> = 1..=3_650;
/// Travelers per flight plan.
pub(crate) const TRAVELERS: RangeInclusive<u32> = 1..=50;
/// Flight plans per booking.
pub(crate) const FLIGHT_PLANS: RangeInclusive<u32> = 1..=5;

/// Milliseconds between the polls of an `[endpoints.NAME.wait]`: often enough to follow a
/// staging that settles in a second, rarely enough not to hammer one.
pub(crate) const WAIT_EVERY_MS: RangeInclusive<u64> = 50..=60_000;
/// Milliseconds a wait may last: ten minutes is longer than any staging should take.
pub(crate) const WAIT_TIMEOUT_MS: RangeInclusive<u64> = 100..=600_000;

/// Flow instances in one run (repeats × scale): beyond this a run is a mistake, not a soak.
pub(crate) const FLOW_INSTANCES: RangeInclusive<u64> = 1..=1_000_000;

/// Bytes of files a package (`ppcert verify FILE.tar.gz`) may hold; it is read into memory.
pub(crate) const PACKAGE_FILE_BYTES: u64 = 512 << 20;
/// Bytes a package may decompress to, headers and padding included.
pub(crate) const PACKAGE_UNPACKED_BYTES: u64 = PACKAGE_FILE_BYTES + (16 << 20);
/// Entries in a package: a bundle holds about ten files.
pub(crate) const PACKAGE_MEMBERS: usize = 10_000;

/// A text file a user hands ppcert: `ppcert.toml`, a scenario or dialect file, `validate`'s.
pub(crate) const TEXT_FILE_BYTES: u64 = 1 << 20;
/// A key file (`--key`, `--sign-key`): an Ed25519 PEM is a few hundred bytes.
pub(crate) const KEY_FILE_BYTES: u64 = 64 << 10;
/// A CA bundle (`--cacert`).
pub(crate) const CA_FILE_BYTES: u64 = 4 << 20;
/// One line of a journal (one exchange, its bodies included), read by `--resume` and `verify`.
pub(crate) const JOURNAL_LINE_BYTES: usize = 64 << 20;

/// A value read from an answer (an id, a reference, a `captured.NAME`): it goes back out in
/// later URLs and bodies and is recorded with every exchange that reads or sends it, so one
/// huge id would cost its size many times over. Ids and references are tens of bytes.
pub(crate) const CAPTURED_VALUE_BYTES: usize = 64 << 10;

/// Characters of a booking number drawn from `[data] booking_number_pattern`: real booking
/// numbers are a dozen characters; a pattern reaching further is a mistake (or a bomb).
pub(crate) const BOOKING_NUMBER_CHARS: u64 = 64;

/// A file's bytes, refused without reading past `max` (a pipe or `/dev/zero` included).
pub(crate) fn read_capped(path: &std::path::Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(max + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "larger than {}, ppcert's bound for this file",
            shown_size(max)
        )));
    }
    Ok(bytes)
}

/// [`read_capped`], as UTF-8 text.
pub(crate) fn read_text_capped(path: &std::path::Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_capped(path, max)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}

fn shown_size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    }
}

/// The lines of `reader` (split at `\n`, which is dropped), each refused past `max` bytes
/// without reading further: a line with no end cannot take the memory it claims.
pub(crate) struct CappedLines<R> {
    reader: R,
    max: usize,
}

impl<R: std::io::BufRead> CappedLines<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        CappedLines { reader, max }
    }
}

impl<R: std::io::BufRead> Iterator for CappedLines<R> {
    type Item = std::io::Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        use std::io::{BufRead as _, Read as _};
        let mut line = Vec::new();
        let limit = self.max as u64 + 1;
        match (&mut self.reader).take(limit).read_until(b'\n', &mut line) {
            Ok(0) => None,
            Err(e) => Some(Err(e)),
            Ok(_) if line.last() == Some(&b'\n') => {
                line.pop();
                Some(Ok(line))
            }
            Ok(n) if n as u64 == limit => Some(Err(std::io::Error::other(format!(
                "a line longer than {}, ppcert's bound for a journal line",
                shown_size(self.max as u64)
            )))),
            Ok(_) => Some(Ok(line)),
        }
    }
}

/// A value outside its bounds: the key it was set by, the value and the bounds. Every bounded
/// value is an integer, so one wide integer holds any of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value} is out of bounds ({start} to {end})")]
pub(crate) struct OutOfBounds {
    pub key: String,
    pub value: i128,
    pub start: i128,
    pub end: i128,
}

/// `Err` naming `key` and the bounds when `value` is outside them.
pub(crate) fn check<T: PartialOrd + Copy + Into<i128>>(
    key: &str,
    value: T,
    range: &RangeInclusive<T>,
) -> Result<(), OutOfBounds> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(OutOfBounds {
            key: key.to_string(),
            value: value.into(),
            start: (*range.start()).into(),
            end: (*range.end()).into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_the_bounds_are_named() {
        assert!(check("run.retries", 20, &RETRIES).is_ok());
        let refused = check("run.retries", 1000, &RETRIES).unwrap_err();
        assert_eq!((refused.value, refused.end), (1000, 20));
        assert_eq!(
            refused.to_string(),
            "run.retries = 1000 is out of bounds (0 to 20)"
        );
        assert!(check("run.concurrency", 0, &CONCURRENCY).is_err());
        assert!(check("data.flight_plans", 6, &FLIGHT_PLANS).is_err());
    }

    #[test]
    fn lines_and_files_are_refused_past_their_bound_without_reading_on() {
        let lines: Vec<_> = CappedLines::new(&b"ab\ncd\nlast"[..], 4)
            .map(Result::unwrap)
            .collect();
        assert_eq!(lines, [b"ab".to_vec(), b"cd".to_vec(), b"last".to_vec()]);
        let mut long = CappedLines::new(&b"abcdef\nx\n"[..], 4);
        let refused = long.next().unwrap().unwrap_err().to_string();
        assert!(refused.contains("longer than"), "{refused}");
        let zero = read_capped(std::path::Path::new("/dev/zero"), 1024);
        assert!(zero.unwrap_err().to_string().contains("larger than 1 KiB"));
    }
}

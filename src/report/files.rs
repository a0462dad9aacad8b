//! Writing the bundle's files whole or not at all (their names and formats are in
//! `formats.rs`, a leaf the command line and the config name too).

use std::io::Write;
use std::path::Path;

/// Writes a file whole or not at all: a crash never leaves half a report.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Streams into `path.partial` through a buffer, then renames: large bundles are never held
/// whole in memory, and a crash never leaves half a file.
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    // `report.html.partial`, not `report.partial`: reports are written side by side, and
    // two of one stem must not share their unfinished file.
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = std::path::PathBuf::from(tmp);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    write(&mut out)?;
    out.flush()?;
    drop(out);
    std::fs::rename(&tmp, path)
}

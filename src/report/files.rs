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
    write_atomic_hashed(path, write).map(drop)
}

/// [`write_atomic_with`], returning the SHA-256 of the file written (for the manifest).
pub(crate) fn write_atomic_hashed(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<String> {
    // `report.html.partial`, not `report.partial`: reports are written side by side, and
    // two of one stem must not share their unfinished file.
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = std::path::PathBuf::from(tmp);
    let written = (|| {
        let file = crate::digest::HashingWriter::new(std::fs::File::create(&tmp)?);
        let mut out = std::io::BufWriter::new(file);
        write(&mut out)?;
        let (file, digest) = out.into_inner().map_err(|e| e.into_error())?.finish();
        drop(file);
        std::fs::rename(&tmp, path)?;
        Ok(digest)
    })();
    // An unfinished file is not left beside the bundle (a later manifest would list it).
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

//! The evidence bundle: `evidence.json` and every report rendered from it alone.

use std::path::Path;

use crate::evidence::{self, Evidence};

/// Writes a file whole or not at all: a crash never leaves half a report.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// Writes `evidence.json` and the reports into `dir`.
pub fn write_bundle(dir: &Path, evidence: &Evidence) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_vec_pretty(evidence).map_err(std::io::Error::other)?;
    write_atomic(&dir.join(evidence::FILE_NAME), &json)
}

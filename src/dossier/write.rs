//! Writing a dossier's directory: each new member kept as a package, the record, its reports
//! and the manifest; a signature the change made stale is removed.

use std::path::Path;

use super::ledger::Read;
use super::model::{Dossier, FILE_NAME, MEMBER_SUFFIX};
use crate::attest::bundle::Source;
use crate::report::manifest::{self, ATTESTATION};

/// Writes the new members, the record, the reports and the manifest; a signature made before
/// no longer holds and is taken away.
pub(crate) fn write<'a>(
    dir: &Path,
    dossier: &Dossier,
    sources: impl Iterator<Item = &'a Source>,
    added: &[Read],
) -> std::io::Result<()> {
    let reports = super::render::reports(dossier)?;
    std::fs::create_dir_all(dir)?;
    for (source, read) in sources.zip(added) {
        keep_member(source, &dir.join(&read.file))?;
    }
    let mut text = serde_json::to_string_pretty(dossier).map_err(std::io::Error::other)?;
    text.push('\n');
    crate::report::write_atomic(&dir.join(FILE_NAME), text.as_bytes())?;
    for (name, text) in reports {
        crate::report::write_atomic(&dir.join(name), text.as_bytes())?;
    }
    let stale = dir.join(ATTESTATION);
    if stale.exists() {
        std::fs::remove_file(&stale)?;
        crate::console::tell!(
            "{}: the dossier changed, so its signature was removed; sign it again (ppcert sign {} --key KEY)",
            stale.display(),
            dir.display()
        );
    }
    manifest::write(dir)
}

/// Keeps the bundle in `source` as the package `out`: a package as it is, a directory packed
/// (its listed files, manifest and attestation).
fn keep_member(source: &Source, out: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_file(out);
    match source {
        Source::Package(path, _) => std::fs::copy(path, out).map(|_| ()),
        Source::Dir(bundle) => {
            let text = std::fs::read_to_string(bundle.join(manifest::FILE_NAME))?;
            let mut files: Vec<String> = manifest::parse(&text)
                .0
                .into_iter()
                .map(|(_, n)| n)
                .collect();
            files.push(manifest::FILE_NAME.to_string());
            if bundle.join(ATTESTATION).is_file() {
                files.push(ATTESTATION.to_string());
            }
            files.sort();
            let name = out.file_name().and_then(|n| n.to_str()).unwrap_or("member");
            let top = name.trim_end_matches(MEMBER_SUFFIX);
            crate::attest::package::write(bundle, top, &files, out)
        }
    }
}

//! `ppcert package`: one `.tar.gz` of a bundle and its attestation, every file under one
//! directory named after the bundle; and reading one back, never unpacked, to verify it,
//! refusing what a careless `tar x` would let escape (`..`, absolute paths, links, duplicates), and
//! anything `tar` would read that the check did not (see `shape.rs`).

use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::Path;

use super::shape::{self, Bounded};
use super::stored::{KEPT_BYTES, KEPT_TOTAL, Origin, Stored};
use super::{ArchiveError, BundleError};
use crate::bounds::{PACKAGE_FILE_BYTES, PACKAGE_MEMBERS};
use crate::report::manifest::{Entry, Kind, Problem};

/// Writes `files` (names in the bundle) of `dir` into `out`, under `top/`. Reproducible: fixed
/// times, modes and owners, files in name order.
pub(crate) fn write(dir: &Path, top: &str, files: &[String], out: &Path) -> std::io::Result<()> {
    let tmp = out.with_extension("partial");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)?;
    let written = (|| {
        let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_mode(0o755);
        header.set_size(0);
        header.set_mtime(0);
        tar.append_data(&mut header, format!("{top}/"), std::io::empty())?;
        for name in files {
            let mut source = std::fs::File::open(dir.join(name))?;
            let mut header = tar::Header::new_ustar();
            header.set_entry_type(tar::EntryType::Regular);
            header.set_mode(0o644);
            header.set_size(source.metadata()?.len());
            header.set_mtime(0);
            tar.append_data(&mut header, format!("{top}/{name}"), &mut source)?;
        }
        tar.into_inner()?.finish()?.sync_all()
    })();
    match written {
        Ok(()) => std::fs::rename(&tmp, out),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

fn problem(message: String) -> Problem {
    Problem {
        message,
        rerenderable: false,
    }
}

/// Why an entry's path has no place in a bundle: what a careless `tar x` would let escape.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum Misplaced {
    #[error("an absolute or DOS path")]
    Absolute,
    #[error("a path with `..`, `.` or an empty part")]
    DotOrEmpty,
    #[error("deeper than the bundle's directory (a bundle holds no subdirectories)")]
    TooDeep,
}

/// Splits an entry's path into the bundle's directory and the file's name; `None` for the
/// directory's own entry. Anything else is a problem.
fn place(path: &str) -> Result<(String, Option<String>), Misplaced> {
    if path.starts_with('/') || path.contains('\\') {
        return Err(Misplaced::Absolute);
    }
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    if parts.iter().any(|p| matches!(*p, "" | "." | "..")) {
        return Err(Misplaced::DotOrEmpty);
    }
    match parts.as_slice() {
        [top] => Ok((top.to_string(), None)),
        [top, name] => Ok((top.to_string(), Some(name.to_string()))),
        _ => Err(Misplaced::TooDeep),
    }
}

/// A package's files, read from its archive, and what was wrong with the archive itself.
pub(crate) struct Loaded {
    pub entries: Vec<Entry>,
    pub files: BTreeMap<String, Stored>,
    pub problems: Vec<Problem>,
    /// The package itself, to read a file that was not kept in memory.
    pub origin: Origin,
}

/// What reading an archive gathers as it goes.
struct Reading {
    loaded: Loaded,
    tops: std::collections::BTreeSet<String>,
    /// Every name taken so far: a duplicate is found in constant time, not by a scan.
    names: HashSet<String>,
    members: usize,
    total: u64,
    /// The bytes of the files kept in memory so far.
    kept: u64,
}

impl Reading {
    fn refuse(&mut self, shown: &str, why: &str) {
        self.loaded
            .problems
            .push(problem(format!("archive entry `{shown}`: {why}")));
    }

    /// Takes one entry: its place and kind checked, its bytes kept when it is a file.
    fn take<R: Read>(&mut self, entry: tar::Entry<'_, R>) -> Result<(), ArchiveError> {
        self.members += 1;
        if self.members > PACKAGE_MEMBERS {
            return Err(ArchiveError::TooManyMembers {
                bound: PACKAGE_MEMBERS,
            });
        }
        let raw = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let kind = match entry.header().entry_type() {
            tar::EntryType::Regular | tar::EntryType::Continuous => Kind::File,
            tar::EntryType::Directory => Kind::Directory,
            tar::EntryType::Symlink | tar::EntryType::Link => Kind::Symlink,
            _ => Kind::Other,
        };
        let Ok(text) = std::str::from_utf8(&raw) else {
            self.refuse(&shown, "a name that is not UTF-8");
            return Ok(());
        };
        let (top, name) = match place(text) {
            Ok(placed) => placed,
            Err(why) => {
                self.refuse(&shown, &why.to_string());
                return Ok(());
            }
        };
        self.tops.insert(top);
        let Some(name) = name else {
            if kind != Kind::Directory {
                self.refuse(&shown, "outside the bundle's directory");
            }
            return Ok(());
        };
        if !self.names.insert(name.clone()) {
            self.refuse(&shown, "a second entry of that name");
            return Ok(());
        }
        self.loaded.entries.push(Entry {
            name: name.clone(),
            utf8: true,
            kind,
        });
        if kind == Kind::File {
            let stored = self.keep(entry)?;
            self.loaded.files.insert(name, stored);
        }
        Ok(())
    }

    /// A file's bytes: kept when small, else where they lie in the decompressed stream.
    fn keep<R: Read>(&mut self, mut entry: tar::Entry<'_, R>) -> Result<Stored, ArchiveError> {
        // Refused on the size its header declares, before a byte of it is inflated.
        self.total = self.total.saturating_add(entry.size());
        if self.total > PACKAGE_FILE_BYTES {
            return Err(ArchiveError::TooLarge {
                mib: PACKAGE_FILE_BYTES >> 20,
            });
        }
        if entry.size() > KEPT_BYTES || self.kept + entry.size() > KEPT_TOTAL {
            // Inflated past here by the archive's next entry; found again by its place.
            return Ok(Stored::At {
                offset: entry.raw_file_position(),
                size: entry.size(),
            });
        }
        self.kept += entry.size();
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry.read_to_end(&mut bytes)?;
        Ok(Stored::Kept(bytes))
    }
}

/// Reads a package: its entries, its small files, where its large ones are, and every way its
/// archive breaks the rules.
pub(crate) fn read(path: &Path) -> Result<Loaded, BundleError> {
    let file = std::fs::File::open(path).map_err(|error| BundleError::Unopenable {
        path: path.to_path_buf(),
        error,
    })?;
    let file = std::sync::Arc::new(file);
    let input = std::io::BufReader::new(&*file);
    read_from(path, input, Origin::file(file.clone()))
}

/// Reads a package from `bytes` (one kept inside a dossier); `path` names it in errors.
pub(crate) fn read_bytes(path: &Path, bytes: Vec<u8>) -> Result<Loaded, BundleError> {
    let bytes: std::sync::Arc<[u8]> = bytes.into();
    read_from(path, &bytes[..], Origin::bytes(bytes.clone()))
}

fn read_from<B: std::io::BufRead>(
    path: &Path,
    input: B,
    origin: Origin,
) -> Result<Loaded, BundleError> {
    let gz = flate2::bufread::GzDecoder::new(input);
    let mut archive = tar::Archive::new(Bounded::new(gz));
    let bad = |error: ArchiveError| BundleError::NotTarGz {
        path: path.to_path_buf(),
        error,
    };
    let mut reading = Reading {
        loaded: Loaded {
            entries: Vec::new(),
            files: BTreeMap::new(),
            problems: Vec::new(),
            origin,
        },
        tops: Default::default(),
        names: HashSet::new(),
        members: 0,
        total: 0,
        kept: 0,
    };
    for entry in archive.entries().map_err(|e| bad(e.into()))? {
        reading
            .take(entry.map_err(|e| bad(e.into()))?)
            .map_err(bad)?;
    }
    // What tar would read past what was checked: a second gzip member, bytes after the gzip
    // stream, entries after the end-of-archive blocks.
    shape::nothing_after(archive.into_inner()).map_err(|e| bad(e.into()))?;
    let mut loaded = reading.loaded;
    if reading.tops.len() > 1 {
        loaded.problems.push(problem(format!(
            "the archive holds more than one top directory ({})",
            reading.tops.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    loaded.entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_directly_inside_one_directory_have_a_place() {
        assert_eq!(
            place("b/evidence.json").unwrap().1.unwrap(),
            "evidence.json"
        );
        assert_eq!(place("b/").unwrap(), ("b".to_string(), None));
        for (bad, why) in [
            ("/etc/passwd", Misplaced::Absolute),
            ("b/../x", Misplaced::DotOrEmpty),
            ("b/sub/x", Misplaced::TooDeep),
            ("./b/x", Misplaced::DotOrEmpty),
            ("b//x", Misplaced::DotOrEmpty),
            ("..\\x", Misplaced::Absolute),
        ] {
            assert_eq!(place(bad), Err(why), "{bad}");
        }
    }
}

//! A bundle to check, wherever it is: a directory, or a package read where it lies (never
//! unpacked to disk; its large files inflated again when read). Both answer the same questions: which entries, and each file's bytes.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use crate::report::manifest::{self, Entry, Kind, Problem};

use super::BundleError;
pub(crate) use super::package::Loaded;

pub(crate) enum Source {
    Dir(PathBuf),
    Package(PathBuf, Loaded),
}

impl Source {
    /// A directory is a bundle; a file is a package (`ppcert package`'s `.tar.gz`).
    pub(crate) fn open(path: &Path) -> Result<Source, BundleError> {
        let meta = path.metadata().map_err(|error| BundleError::Unopenable {
            path: path.to_path_buf(),
            error,
        })?;
        if meta.is_dir() {
            Ok(Source::Dir(path.to_path_buf()))
        } else {
            let loaded = super::package::read(path)?;
            Ok(Source::Package(path.to_path_buf(), loaded))
        }
    }

    pub(crate) fn path(&self) -> &Path {
        match self {
            Source::Dir(path) | Source::Package(path, _) => path,
        }
    }

    /// The entries at the bundle's top.
    pub(crate) fn entries(&self) -> Result<Vec<Entry>, BundleError> {
        match self {
            Source::Dir(dir) => manifest::entries(dir).map_err(|error| BundleError::Unlistable {
                dir: dir.clone(),
                error,
            }),
            Source::Package(_, loaded) => Ok(loaded.entries.clone()),
        }
    }

    /// What was wrong with the archive itself (none for a directory).
    pub(crate) fn archive_problems(&self) -> Vec<Problem> {
        match self {
            Source::Dir(_) => Vec::new(),
            Source::Package(_, loaded) => loaded.problems.clone(),
        }
    }

    /// A regular file of the bundle, read through a buffer.
    pub(crate) fn reader(&self, name: &str) -> std::io::Result<Box<dyn BufRead + '_>> {
        match self {
            Source::Dir(dir) => {
                let path = dir.join(name);
                if path.symlink_metadata()?.file_type().is_symlink() {
                    return Err(std::io::Error::other("a symbolic link, not followed"));
                }
                Ok(Box::new(std::io::BufReader::new(std::fs::File::open(
                    path,
                )?)))
            }
            Source::Package(_, loaded) => loaded
                .files
                .get(name)
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?
                .reader(&loaded.origin),
        }
    }

    pub(crate) fn read_to_string(&self, name: &str) -> Result<String, BundleError> {
        let mut text = String::new();
        self.reader(name)
            .and_then(|mut r| r.read_to_string(&mut text))
            .map_err(|error| BundleError::Unreadable {
                name: name.to_string(),
                error,
            })?;
        Ok(text)
    }

    pub(crate) fn digest(&self, name: &str) -> std::io::Result<String> {
        crate::digest::read_sha256_hex(self.reader(name)?)
    }
}

/// Each file's SHA-256, hashed once however often the manifest and the attestation ask.
pub(crate) struct Digests<'a> {
    source: &'a Source,
    known: std::collections::HashMap<String, String>,
}

impl<'a> Digests<'a> {
    pub(crate) fn new(source: &'a Source) -> Digests<'a> {
        Digests {
            source,
            known: Default::default(),
        }
    }

    pub(crate) fn of(&mut self, name: &str) -> std::io::Result<String> {
        if let Some(known) = self.known.get(name) {
            return Ok(known.clone());
        }
        let value = self.source.digest(name)?;
        self.known.insert(name.to_string(), value.clone());
        Ok(value)
    }
}

/// Whether `entries` holds `name` as a regular file.
pub(crate) fn has_file(entries: &[Entry], name: &str) -> bool {
    entries
        .iter()
        .any(|e| e.utf8 && e.name == name && e.kind == Kind::File)
}

//! `MANIFEST.sha256`: `sha256sum -c` compatible lines for every other file of the bundle, and
//! the check `ppcert verify` makes against it: the bundle's file set is exactly the manifest's.

use std::collections::BTreeSet;
use std::path::Path;

pub(crate) const FILE_NAME: &str = "MANIFEST.sha256";

/// The one file of a bundle the manifest does not list: it signs the manifest (and every
/// file) and is written after it, by `ppcert run --sign-key` or `ppcert sign`.
pub(crate) const ATTESTATION: &str = "attestation.intoto.json";

/// Files every bundle holds: the record itself. A manifest without them was cut down.
pub(crate) const REQUIRED: [&str; 2] = ["evidence.json", "journal.jsonl"];

/// What an entry of a bundle is; only regular files belong in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Directory,
    Symlink,
    Other,
}

/// One entry at the top of a bundle (a directory's, or a package's).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The name, lossily decoded when it is not UTF-8.
    pub name: String,
    pub utf8: bool,
    pub kind: Kind,
}

/// One way the bundle differs from what the run wrote.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    pub message: String,
    /// A report file changed or missing: `ppcert report` writes it again from the record.
    pub rerenderable: bool,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn problem(message: String) -> Problem {
    Problem {
        message,
        rerenderable: false,
    }
}

/// The entries at the top of `dir`, symbolic links not followed.
pub(crate) fn entries(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = match entry.path().symlink_metadata()?.file_type() {
            t if t.is_symlink() => Kind::Symlink,
            t if t.is_dir() => Kind::Directory,
            t if t.is_file() => Kind::File,
            _ => Kind::Other,
        };
        let name = entry.file_name();
        entries.push(Entry {
            utf8: name.to_str().is_some(),
            name: name.to_string_lossy().into_owned(),
            kind,
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// Lists every regular file of `dir` but the manifest and the attestation.
pub(crate) fn write(dir: &Path) -> std::io::Result<()> {
    write_known(dir, &Known::new())
}

/// Digests already taken of files of a bundle that no one writes again, by file name.
pub(crate) type Known = std::collections::HashMap<String, String>;

/// [`write`], taking a file's digest from `known` where it is there instead of reading the
/// file again (a run's end hashes the record while its reports render).
pub(crate) fn write_known(dir: &Path, known: &Known) -> std::io::Result<()> {
    let mut text = String::new();
    for entry in entries(dir)? {
        if entry.kind != Kind::File || !entry.utf8 || is_outside(&entry.name) {
            continue;
        }
        let digest = match known.get(&entry.name) {
            Some(digest) => digest.clone(),
            None => crate::digest::file_sha256_hex(&dir.join(&entry.name))?,
        };
        text.push_str(&format!("{digest}  {}\n", entry.name));
    }
    super::write_atomic(&dir.join(FILE_NAME), text.as_bytes())
}

/// The regular files of `dir` that the manifest lists, but for those named in `leaving`
/// (about to be written) and unfinished `*.partial` files. Listed before anything is written
/// beside them: a file renamed while the directory is read would fail the listing.
pub(crate) fn settled(dir: &Path, leaving: &[&str]) -> std::io::Result<Vec<String>> {
    let listed = |e: &Entry| e.kind == Kind::File && e.utf8 && !is_outside(&e.name);
    Ok((entries(dir)?.into_iter())
        .filter(|e| {
            listed(e) && !leaving.contains(&e.name.as_str()) && !e.name.ends_with(".partial")
        })
        .map(|e| e.name)
        .collect())
}

/// The digests of `names` in `dir`, for [`write_known`]: taken while the reports render.
pub(crate) fn digests_of(dir: &Path, names: &[String]) -> std::io::Result<Known> {
    (names.iter())
        .map(|name| {
            Ok((
                name.clone(),
                crate::digest::file_sha256_hex(&dir.join(name))?,
            ))
        })
        .collect()
}

/// The manifest itself and the attestation are the files the manifest does not list.
fn is_outside(name: &str) -> bool {
    name == FILE_NAME || name == ATTESTATION
}

/// A manifest entry names a file of the bundle itself: no directory part, no `..`, no root.
fn inside_the_bundle(name: &str) -> bool {
    !name.is_empty()
        && !name.contains(['/', '\\', '\n', '\r'])
        && name != ".."
        && name != "."
        && !Path::new(name).is_absolute()
}

fn is_digest(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The manifest's lines as (digest, name), and the problems of the lines that are not.
pub(crate) fn parse(text: &str) -> (Vec<(String, String)>, Vec<Problem>) {
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{FILE_NAME}:{}", i + 1);
        let Some((digest, name)) = line.split_once("  ").filter(|(d, _)| is_digest(d)) else {
            problems.push(problem(format!(
                "{at}: not a `<sha256 in lowercase hex>  <file>` line"
            )));
            continue;
        };
        if !inside_the_bundle(name) {
            problems.push(problem(format!("{at}: `{name}` is outside the bundle")));
        } else if is_outside(name) {
            problems.push(problem(format!(
                "{at}: `{name}` is never listed (the manifest does not list itself or the attestation)"
            )));
        } else if !seen.insert(name.to_string()) {
            problems.push(problem(format!("{at}: `{name}` is listed twice")));
        } else {
            lines.push((digest.to_string(), name.to_string()));
        }
    }
    (lines, problems)
}

/// What differs between `present` (a bundle's entries) and its manifest `text`; empty when the
/// bundle is exactly what the run wrote. `digest` hashes a present regular file by name. An
/// unsigned manifest catches accidental change; it cannot stop someone who rewrites a file and
/// its line together: the re-derived verdict and the attestation do that.
pub(crate) fn check(
    text: &str,
    present: &[Entry],
    digest: &mut dyn FnMut(&str) -> std::io::Result<String>,
) -> Vec<Problem> {
    check_holding(text, present, digest, &REQUIRED)
}

/// [`check`], for a directory whose record is in `required` (a dossier's is `dossier.json`).
pub(crate) fn check_holding(
    text: &str,
    present: &[Entry],
    digest: &mut dyn FnMut(&str) -> std::io::Result<String>,
    required: &[&str],
) -> Vec<Problem> {
    let (lines, mut problems) = parse(text);
    let kind_of = |name: &str| present.iter().find(|e| e.utf8 && e.name == name);
    for (expected, name) in &lines {
        let report_file = super::Format::ALL.iter().any(|f| f.file_name() == name);
        let found = match kind_of(name).map(|e| e.kind) {
            None => Err(format!("{name}: missing")),
            Some(Kind::File) => match digest(name) {
                Ok(actual) if actual == *expected => Ok(()),
                Ok(_) => Err(format!(
                    "{name}: changed (SHA-256 differs from the manifest)"
                )),
                Err(e) => Err(format!("{name}: cannot read: {e}")),
            },
            Some(kind) => {
                problems.push(problem(format!("{name}: {}", not_a_file(kind))));
                continue;
            }
        };
        if let Err(message) = found {
            problems.push(Problem {
                message,
                rerenderable: report_file,
            });
        }
    }
    for required in required {
        if !lines.iter().any(|(_, name)| name == required) {
            problems.push(problem(format!(
                "{required}: not in the manifest (every bundle has it; the manifest was cut down)"
            )));
        }
    }
    problems.extend(unlisted(&lines, present));
    problems
}

fn not_a_file(kind: Kind) -> &'static str {
    match kind {
        Kind::Directory => "a directory (a bundle holds regular files only)",
        Kind::Symlink => "a symbolic link (a bundle holds regular files only, never links)",
        _ => "not a regular file (a bundle holds regular files only)",
    }
}

/// Entries the manifest does not account for: anything unlisted, and the manifest or the
/// attestation when they are not regular files.
fn unlisted(lines: &[(String, String)], present: &[Entry]) -> Vec<Problem> {
    let listed = |name: &str| lines.iter().any(|(_, n)| n == name);
    let mut problems = Vec::new();
    for entry in present {
        let name = &entry.name;
        if !entry.utf8 {
            problems.push(problem(format!(
                "`{name}`: a name that is not UTF-8, not in the manifest"
            )));
        } else if is_outside(name) {
            if entry.kind != Kind::File {
                problems.push(problem(format!("{name}: {}", not_a_file(entry.kind))));
            }
        } else if !listed(name) {
            let what = match entry.kind {
                Kind::File => "",
                Kind::Directory => " (a directory)",
                Kind::Symlink => " (a symbolic link)",
                Kind::Other => " (not a regular file)",
            };
            problems.push(problem(format!(
                "{name}{what}: not in the manifest (added after the run)"
            )));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> Entry {
        Entry {
            name: name.into(),
            utf8: true,
            kind: Kind::File,
        }
    }

    #[test]
    fn the_file_set_is_exactly_the_manifests() {
        let zero = "0".repeat(64);
        let text = format!(
            "{zero}  evidence.json\n{zero}  journal.jsonl\n{zero}  journal.jsonl\n{zero} x\n{zero}  ../y\n"
        );
        let mut present = vec![
            file("evidence.json"),
            file("journal.jsonl"),
            file("a.partial"),
        ];
        present.push(Entry {
            name: "sub".into(),
            utf8: true,
            kind: Kind::Directory,
        });
        present.push(Entry {
            name: "n\u{fffd}".into(),
            utf8: false,
            kind: Kind::File,
        });
        let problems: Vec<String> = check(&text, &present, &mut |_| Ok(zero.clone()))
            .into_iter()
            .map(|p| p.message)
            .collect();
        assert_eq!(
            problems,
            vec![
                "MANIFEST.sha256:3: `journal.jsonl` is listed twice",
                "MANIFEST.sha256:4: not a `<sha256 in lowercase hex>  <file>` line",
                "MANIFEST.sha256:5: `../y` is outside the bundle",
                "a.partial: not in the manifest (added after the run)",
                "sub (a directory): not in the manifest (added after the run)",
                "`n\u{fffd}`: a name that is not UTF-8, not in the manifest",
            ]
        );
    }
}

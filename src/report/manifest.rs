//! `MANIFEST.sha256`: `sha256sum -c` compatible lines for every other file of the bundle, and
//! the check `ppcert verify` makes against it.

use std::path::Path;

pub const FILE_NAME: &str = "MANIFEST.sha256";

fn bundle_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name != FILE_NAME && !name.ends_with(".partial"))
        .collect();
    names.sort();
    Ok(names)
}

pub fn write(dir: &Path) -> std::io::Result<()> {
    let mut text = String::new();
    for name in bundle_files(dir)? {
        let digest = crate::digest::file_sha256_hex(&dir.join(&name))?;
        text.push_str(&format!("{digest}  {name}\n"));
    }
    super::write_atomic(&dir.join(FILE_NAME), text.as_bytes())
}

/// Files every bundle holds: the record itself. A manifest without them was cut down.
pub const REQUIRED: [&str; 2] = ["evidence.json", "journal.jsonl"];

/// A manifest entry names a file of the bundle itself: no directory part, no `..`, no root.
fn inside_the_bundle(name: &str) -> bool {
    !name.is_empty()
        && !name.contains(['/', '\\'])
        && name != ".."
        && name != "."
        && !Path::new(name).is_absolute()
}

/// What differs from the manifest; empty when the bundle is intact. An unsigned manifest
/// catches accidental change (a copy that went wrong, an edited file); it cannot stop someone
/// who rewrites a file and its line together.
pub fn verify(dir: &Path) -> Result<Vec<String>, String> {
    let path = dir.join(FILE_NAME);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut problems = Vec::new();
    let mut listed = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some((digest, name)) = line.split_once("  ") else {
            problems.push(format!(
                "{}:{}: not a `<sha256>  <file>` line",
                FILE_NAME,
                i + 1
            ));
            continue;
        };
        if !inside_the_bundle(name) {
            problems.push(format!(
                "{}:{}: `{name}` is outside the bundle",
                FILE_NAME,
                i + 1
            ));
            continue;
        }
        listed.push(name.to_string());
        match crate::digest::file_sha256_hex(&dir.join(name)) {
            Ok(actual) if actual == digest => {}
            Ok(_) => problems.push(format!(
                "{name}: changed (SHA-256 differs from the manifest)"
            )),
            Err(_) => problems.push(format!("{name}: missing")),
        }
    }
    for required in REQUIRED {
        if !listed.iter().any(|name| name == required) {
            problems.push(format!(
                "{required}: not in the manifest (every bundle has it; the manifest was cut down)"
            ));
        }
    }
    for name in bundle_files(dir).map_err(|e| e.to_string())? {
        if !listed.contains(&name) {
            problems.push(format!("{name}: not in the manifest (added after the run)"));
        }
    }
    Ok(problems)
}

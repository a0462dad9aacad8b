//! What `ppcert verify` checks of a dossier (a directory or its package): the exact file set
//! against the manifest, every member as a bundle of its own, `dossier.json` against the
//! ledger computed again from the members, and the attestation.

use ed25519_dalek::VerifyingKey;
use serde_json::Value;

use super::ledger::{self, Read};
use super::members;
use super::model::{Dossier, FILE_NAME, is_member_file};
use crate::attest::bundle::{Digests, Source, has_file};
use crate::attest::verify::Signed;
use crate::evidence::Tool;
use crate::report::manifest::{self, ATTESTATION, Entry};

/// Everything a check of a dossier found.
pub(crate) struct Checked {
    pub problems: Vec<String>,
    /// How many of `problems` are report files changed or missing (`ppcert report` writes
    /// them again from the record).
    pub rerenderable: usize,
    /// The dossier computed again from its members, when every member verified.
    pub dossier: Option<Dossier>,
    /// The members, verified and read, in the order the dossier lists them.
    pub members: Vec<Read>,
    /// The manifest's lines (digest, name) and the manifest's own digest.
    pub listed: Vec<(String, String)>,
    pub manifest_sha256: Option<String>,
    pub signed: Signed,
}

/// Whether `source` holds a dossier rather than a run's bundle.
pub(crate) fn is_dossier(source: &Source) -> bool {
    source
        .entries()
        .is_ok_and(|entries| has_file(&entries, FILE_NAME))
}

/// Checks the dossier in `source`; with `key`, its attestation must be signed by it.
/// `attestation` false leaves the attestation aside (`ppcert sign --force` replaces it).
pub(crate) fn check(source: &Source, key: Option<&VerifyingKey>, attestation: bool) -> Checked {
    let mut checked = Checked {
        problems: source
            .archive_problems()
            .into_iter()
            .map(|p| p.message)
            .collect(),
        rerenderable: 0,
        dossier: None,
        members: Vec::new(),
        listed: Vec::new(),
        manifest_sha256: None,
        signed: Signed::No,
    };
    let entries = match source.entries() {
        Ok(entries) => entries,
        Err(e) => {
            checked.problems.push(e.to_string());
            return checked;
        }
    };
    check_manifest(source, &entries, &mut checked);
    let recorded = source
        .read_to_string(FILE_NAME)
        .map_err(|e| e.to_string())
        .and_then(|text| Dossier::parse(FILE_NAME, &text));
    let recorded = match recorded {
        Ok(recorded) => recorded,
        Err(e) => {
            checked.problems.push(e);
            return checked;
        }
    };
    read_members(source, &recorded, &mut checked);
    // Members of another partner or target never count together, however dossier.json reads.
    (checked.problems).extend(members::mismatched(&checked.members));
    let tool = recorded.tool.clone();
    // A changed report does not stop the ledger being computed again: `report` rewrites it.
    if checked.problems.len() == checked.rerenderable && !checked.members.is_empty() {
        let computed = ledger::compute(&checked.members);
        checked.problems.extend(differences(&recorded, &computed));
        checked.dossier = Some(computed);
    }
    if attestation && entries.iter().any(|e| e.name == ATTESTATION) {
        check_attestation(source, key, &tool, &mut checked);
    } else if key.is_some() {
        checked.problems.push(format!(
            "{ATTESTATION}: missing: the dossier is not signed, so --key has nothing to check"
        ));
    }
    checked
}

/// The manifest lists exactly the files the dossier holds, with their digests.
fn check_manifest(source: &Source, entries: &[Entry], checked: &mut Checked) {
    let mut digests = Digests::new(source);
    let mut digest = |name: &str| digests.of(name);
    match source.read_to_string(manifest::FILE_NAME) {
        Ok(text) => {
            let found = manifest::check_holding(&text, entries, &mut digest, &[FILE_NAME]);
            checked.rerenderable = found.iter().filter(|p| p.rerenderable).count();
            checked
                .problems
                .extend(found.into_iter().map(|p| p.message));
            checked.listed = manifest::parse(&text).0;
            checked.manifest_sha256 = digest(manifest::FILE_NAME).ok();
        }
        Err(e) => checked
            .problems
            .push(format!("{}: {e}", manifest::FILE_NAME)),
    }
}

/// The attestation signs this manifest and this dossier (by `key`, when given).
fn check_attestation(
    source: &Source,
    key: Option<&VerifyingKey>,
    tool: &Tool,
    checked: &mut Checked,
) {
    let files = super::attest::Files {
        listed: &checked.listed,
        manifest_sha256: checked.manifest_sha256.as_deref().unwrap_or_default(),
    };
    let dossier = checked.dossier.as_ref();
    checked.signed = super::attest::check(source, key, dossier, tool, files, &mut checked.problems);
}

/// Verifies every member the dossier lists, and that it lists every member it holds.
fn read_members(source: &Source, recorded: &Dossier, checked: &mut Checked) {
    if recorded.members.is_empty() {
        checked
            .problems
            .push(format!("{FILE_NAME}: lists no member"));
    }
    for (_, name) in (checked.listed.iter()).filter(|(_, name)| is_member_file(name)) {
        if !recorded.members.iter().any(|m| m.file == *name) {
            checked.problems.push(format!(
                "{name}: a member package {FILE_NAME} does not list"
            ));
        }
    }
    for member in &recorded.members {
        if !is_member_file(&member.file) || !checked.listed.iter().any(|(_, n)| *n == member.file) {
            checked.problems.push(format!(
                "{}: a member {FILE_NAME} lists that the manifest does not",
                member.file
            ));
            continue;
        }
        let read = members::open(source, &member.file)
            .map_err(|e| vec![e])
            .and_then(|opened| members::verify(&opened, None, Some(member.file.clone())));
        match read {
            Ok(read) => checked.members.push(read),
            Err(problems) => checked
                .problems
                .extend((problems.into_iter()).map(|p| format!("member {}: {p}", member.file))),
        }
    }
}

/// Where `dossier.json` says other than its members give (the tool that wrote it aside).
fn differences(recorded: &Dossier, computed: &Dossier) -> Vec<String> {
    let as_json = |dossier: &Dossier| {
        let mut value = serde_json::to_value(dossier).unwrap_or(Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.remove("tool");
        }
        value
    };
    let mut out = Vec::new();
    compare(FILE_NAME, &as_json(recorded), &as_json(computed), &mut out);
    out
}

/// Names each leaf where `recorded` and `computed` differ, the first ten of them.
fn compare(path: &str, recorded: &Value, computed: &Value, out: &mut Vec<String>) {
    if out.len() >= 10 {
        return;
    }
    match (recorded, computed) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let (x, y) = (a.get(key), b.get(key));
                let (x, y) = (x.unwrap_or(&Value::Null), y.unwrap_or(&Value::Null));
                compare(&format!("{path}.{key}"), x, y, out);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                compare(&format!("{path}[{i}]"), x, y, out);
            }
        }
        (a, b) if a != b => out.push(format!("{path}: says {a}, the members give {b}")),
        _ => {}
    }
}

//! The bundles of a dossier: each one verified as `ppcert verify` verifies it, held to the
//! dossier's partner, target and environment, and read from the packages the dossier keeps.

use std::io::Read as _;
use std::path::Path;

use ed25519_dalek::VerifyingKey;

use super::ledger::{Counted, Read};
use super::model::{MEMBER_PREFIX, MEMBER_SUFFIX};
use crate::attest::bundle::Source;
use crate::attest::verify::{Signed, check};
use crate::evidence::{self, RunInfo};
use crate::journal;

/// Verifies the bundle in `source` (its signature too with `key`) and reads it for the ledger;
/// `file` is its name in the dossier, or `None` to name it after its run and journal. The
/// problems `verify` would name, when it does not verify.
pub(crate) fn verify(
    source: &Source,
    key: Option<&VerifyingKey>,
    file: Option<String>,
) -> Result<Read, Vec<String>> {
    let checked = check(source, key, true);
    let problems: Vec<String> = checked.problems.iter().map(|p| p.message.clone()).collect();
    let (Some(derived), Some(_), true) = (checked.derived, checked.recorded, problems.is_empty())
    else {
        return Err(match problems.is_empty() {
            true => vec!["its record cannot be computed again from its journal".into()],
            false => problems,
        });
    };
    let journal_sha256 = source
        .digest(journal::FILE_NAME)
        .map_err(|e| vec![format!("{}: cannot read: {e}", journal::FILE_NAME)])?;
    // The check read the record without holding its exchanges; they are read again one at a
    // time, keeping only what the dossier's ledger counts.
    let counted = Counted::read(|each| {
        let reader = (source.reader(evidence::FILE_NAME))
            .map_err(|e| format!("{}: cannot read: {e}", evidence::FILE_NAME))?;
        evidence::read::each_exchange(evidence::FILE_NAME, reader, each)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
    .map_err(|e| vec![e])?;
    let file = file.unwrap_or_else(|| member_file(&derived.run.id, &journal_sha256));
    Ok(Read {
        file,
        derived,
        counted,
        journal_sha256,
        signed: checked.signed != Signed::No,
    })
}

/// The name a bundle is kept under in the dossier: its run and its journal, so the same
/// bundle added twice has the same name and a resumed run's bundle another.
pub(crate) fn member_file(run_id: &str, journal_sha256: &str) -> String {
    let id: String = run_id
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || c == '-' {
            true => c,
            false => '_',
        })
        .collect();
    let digest = journal_sha256.get(..12).unwrap_or(journal_sha256);
    format!("{MEMBER_PREFIX}{id}-{digest}{MEMBER_SUFFIX}")
}

/// The member package `name` kept in the dossier `dossier`, its compressed bytes read into memory.
pub(crate) fn open(dossier: &Source, name: &str) -> Result<Source, String> {
    let mut bytes = Vec::new();
    dossier
        .reader(name)
        .and_then(|mut r| r.read_to_end(&mut bytes))
        .map_err(|e| format!("{name}: cannot read: {e}"))?;
    let path = dossier.path().join(name);
    let loaded =
        crate::attest::package::read_bytes(&path, bytes).map_err(|e| format!("{name}: {e}"))?;
    Ok(Source::Package(path, loaded))
}

/// Whether the bundle `name` (its run `offered`) may join a dossier of `reference`'s partner,
/// target and environment; what differs when it may not.
pub(crate) fn compatible(
    reference: &RunInfo,
    offered: &RunInfo,
    name: &Path,
) -> Result<(), String> {
    let name = name.display();
    let (theirs, ours) = (&offered.target, &reference.target);
    if theirs.sandbox && !ours.sandbox {
        return Err(format!(
            "{name}: its answers came from ppcert's sandbox ({}): a sandbox bundle never counts toward a staging dossier",
            theirs.base_url
        ));
    }
    if ours.sandbox && !theirs.sandbox {
        return Err(format!(
            "{name}: it talked to a staging ({}) but the dossier holds sandbox bundles only: start a new dossier for staging evidence",
            theirs.base_url
        ));
    }
    if offered.partner.name != reference.partner.name {
        return Err(format!(
            "{name}: partner \"{}\", not the dossier's \"{}\"",
            offered.partner.name, reference.partner.name
        ));
    }
    if offered.partner.flight_seller != reference.partner.flight_seller {
        return Err(format!(
            "{name}: flight seller {}, the dossier's partner {}",
            offered.partner.flight_seller, reference.partner.flight_seller
        ));
    }
    if normal(&theirs.base_url) != normal(&ours.base_url) {
        return Err(format!(
            "{name}: target {}, not the dossier's {}",
            theirs.base_url, ours.base_url
        ));
    }
    if theirs.environment != ours.environment {
        return Err(format!(
            "{name}: environment {}, not the dossier's {}",
            theirs.environment.as_str(),
            ours.environment.as_str()
        ));
    }
    Ok(())
}

/// A base URL without its trailing slashes: `https://s/api/` and `https://s/api` are one target.
fn normal(url: &str) -> &str {
    url.trim_end_matches('/')
}

/// Each member that may not sit beside the others (another partner, target or environment,
/// or a sandbox bundle among staging ones), named, whatever `dossier.json` says: the same
/// rule as when a bundle is added, applied to what the members' own records say.
pub(crate) fn mismatched(members: &[Read]) -> Vec<String> {
    let runs: Vec<&RunInfo> = members.iter().map(|m| &m.derived.run).collect();
    let Some(reference) = reference(&runs) else {
        return Vec::new();
    };
    (members.iter())
        .filter_map(|m| compatible(runs[reference], &m.derived.run, Path::new(&m.file)).err())
        .map(|why| format!("member {why}: it cannot count in this dossier"))
        .collect()
}

/// The first staging member of `offered` (else the first): what the rest are held to.
pub(crate) fn reference(offered: &[&RunInfo]) -> Option<usize> {
    (offered.iter().position(|run| !run.target.sandbox)).or((!offered.is_empty()).then_some(0))
}

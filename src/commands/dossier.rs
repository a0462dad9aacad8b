//! `ppcert dossier`, and what `run --dossier`, `proxy --dossier`, `verify`, `sign` and
//! `package` do with a dossier: verified bundles kept inside one directory as packages, one
//! ledger across them, its own record, reports and manifest.

use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};

use crate::attest::bundle::Source;
use crate::attest::keys;
use crate::cli::DossierArgs;
use crate::dossier::ledger::{self, Read};
use crate::dossier::verify::{Checked, check, is_dossier};
use crate::dossier::{Dossier, FILE_NAME, members};
use crate::error::{Failure, Judgement, Refusal, Unverified};
use crate::exit_codes;
use crate::report::manifest::{self, ATTESTATION};

pub(crate) fn dossier(args: DossierArgs) -> Result<u8, Failure> {
    let key = match &args.key {
        Some(path) => Some(keys::load_verifying(path)?),
        None => None,
    };
    let dossier = add(&args.out, &args.bundles, key.as_ref())?;
    say_summary(&args.out, &dossier);
    Ok(verdict_code(&dossier))
}

/// 0 when every requirement is met across the dossier, else 1.
pub(crate) fn verdict_code(dossier: &Dossier) -> u8 {
    let passed = matches!(dossier.verdict, crate::evidence::Verdict::Passed);
    Judgement::of(passed).exit_code()
}

/// The verdict and the ledger, a line each, on stdout.
pub(crate) fn say_summary(dir: &Path, dossier: &Dossier) {
    summary(dir, dossier)
        .iter()
        .for_each(|line| crate::console::say!("{line}"));
}

/// The verdict and the ledger, a line each.
pub(crate) fn summary(dir: &Path, dossier: &Dossier) -> Vec<String> {
    let mut lines = vec![format!(
        "dossier {}: verdict {} for partner \"{}\" against {} ({} bundle(s))",
        dir.display(),
        dossier.verdict.word(),
        dossier.partner.name,
        dossier.target.base_url,
        dossier.members.len()
    )];
    for requirement in &dossier.requirements {
        let r = &requirement.counts;
        let by: Vec<String> = (requirement.proven_by.iter())
            .map(|p| format!("{} {}", p.run_id, p.counted))
            .collect();
        let met = if r.met { "met" } else { "NOT met" };
        lines.push(format!(
            "  {:<20} {:>3}/{:<3} {met:<7} proven by: {}",
            r.operation.as_str(),
            r.succeeded,
            r.required,
            if by.is_empty() {
                "none".into()
            } else {
                by.join(", ")
            }
        ));
    }
    lines.extend(
        dossier
            .notice
            .iter()
            .map(|notice| format!("note: {notice}")),
    );
    lines
}

/// The dossier at `dir` verified and read, or `None` when there is none yet. A directory
/// holding something else is refused.
pub(crate) fn open(dir: &Path) -> Result<Option<Vec<Read>>, Failure> {
    if !dir.join(FILE_NAME).exists() {
        let empty = std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_none());
        return match empty {
            true => Ok(None),
            false => Err(Refusal::NotADossier {
                dir: dir.to_path_buf(),
            }
            .into()),
        };
    }
    let checked = check(&Source::Dir(dir.to_path_buf()), None, false);
    if !checked.problems.is_empty() {
        return Err(refuse(dir, &checked, "the dossier does not verify"));
    }
    Ok(Some(checked.members))
}

fn refuse(path: &Path, checked: &Checked, what: &'static str) -> Failure {
    for problem in &checked.problems {
        crate::console::tell!("{}: {problem}", path.display());
    }
    let count = checked.problems.len();
    Unverified::Problems { count, what }.into()
}

/// Adds `bundles` (directories or packages) to the dossier at `dir`, made when there is none;
/// with `key`, every bundle must be signed by it. The dossier as it now is.
pub(crate) fn add(
    dir: &Path,
    bundles: &[PathBuf],
    key: Option<&VerifyingKey>,
) -> Result<Dossier, Failure> {
    let existing = open(dir)?.unwrap_or_default();
    let kept = existing.len();
    let mut reads = existing;
    let mut sources = Vec::new();
    for path in bundles {
        if path.symlink_metadata().is_err() {
            return Err(Refusal::NoSuchBundle { path: path.clone() }.into());
        }
        let source = Source::open(path)?;
        if is_dossier(&source) {
            return Err(Refusal::DossierNotBundle { path: path.clone() }.into());
        }
        let read = members::verify(&source, key, None).map_err(|problems| {
            for problem in &problems {
                crate::console::tell!("{}: {problem}", path.display());
            }
            Failure::from(Unverified::Member {
                path: path.clone(),
                count: problems.len(),
            })
        })?;
        if let Some(same) = reads
            .iter()
            .find(|r| r.journal_sha256 == read.journal_sha256)
        {
            crate::console::tell!(
                "{}: already in the dossier as {}: nothing of it counts twice",
                path.display(),
                same.file
            );
            continue;
        }
        reads.push(read);
        sources.push((path.clone(), source));
    }
    let runs: Vec<_> = reads.iter().map(|r| &r.derived.run).collect();
    let reference = match kept {
        0 => members::reference(&runs),
        _ => Some(0),
    }
    .ok_or(Refusal::EmptyDossier)?;
    for ((path, _), read) in sources.iter().zip(&reads[kept..]) {
        members::compatible(runs[reference], &read.derived.run, path)
            .map_err(Refusal::OtherMember)?;
    }
    let dossier = ledger::compute(&reads);
    if sources.is_empty() {
        return Ok(dossier);
    }
    write(dir, &dossier, &sources, &reads[kept..]).map_err(|error| Failure::NotWritten {
        path: dir.to_path_buf(),
        error,
    })?;
    Ok(dossier)
}

/// Writes the new members, the record, the reports and the manifest; a signature made before
/// no longer holds and is taken away.
fn write(
    dir: &Path,
    dossier: &Dossier,
    sources: &[(PathBuf, Source)],
    added: &[Read],
) -> std::io::Result<()> {
    let reports = crate::dossier::render::reports(dossier)?;
    std::fs::create_dir_all(dir)?;
    for ((_, source), read) in sources.iter().zip(added) {
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
            let top = name.trim_end_matches(crate::dossier::MEMBER_SUFFIX);
            crate::attest::package::write(bundle, top, &files, out)
        }
    }
}

/// `ppcert verify` of a dossier (a directory or its package).
pub(crate) fn verify(source: &Source, key: Option<&VerifyingKey>) -> Result<u8, Failure> {
    let checked = check(source, key, true);
    if !checked.problems.is_empty() {
        return Err(refuse(
            source.path(),
            &checked,
            "the dossier does not verify",
        ));
    }
    let Some(dossier) = &checked.dossier else {
        return Err(Unverified::NoMember.into());
    };
    crate::console::say!("{}: verified dossier", source.path().display());
    crate::console::say!(
        "  files:   exactly the {} files MANIFEST.sha256 lists, each unchanged; nothing added",
        checked.listed.len()
    );
    crate::console::say!(
        "  members: {} bundle(s), each verified as `ppcert verify` verifies a bundle; {FILE_NAME} agrees with the ledger computed again from them",
        dossier.members.len()
    );
    use crate::attest::verify::Signed;
    let signed = match &checked.signed {
        Signed::ByKey { fingerprint, .. } => {
            format!("by the key SHA256:{fingerprint} (the key you gave), over every file")
        }
        Signed::Unchecked { keyids, .. } => format!(
            "names key(s) {} but no key was given: NOT checked",
            keyids.join(", ")
        ),
        _ => "no (no attestation.intoto.json)".into(),
    };
    crate::console::say!("  signed:  {signed}");
    say_summary(source.path(), dossier);
    Ok(exit_codes::SUCCESS)
}

/// `ppcert sign` of a dossier: its statement computed again from the members.
pub(crate) fn sign(
    dir: &Path,
    key: &SigningKey,
    force: bool,
) -> Result<(PathBuf, String), Failure> {
    if !force && dir.join(ATTESTATION).symlink_metadata().is_ok() {
        return Err(Refusal::AlreadySigned {
            what: "dossier",
            path: dir.join(ATTESTATION),
        }
        .into());
    }
    let source = Source::Dir(dir.to_path_buf());
    let checked = check(&source, None, false);
    let (Some(dossier), Some(manifest_sha256), true) = (
        &checked.dossier,
        &checked.manifest_sha256,
        checked.problems.is_empty(),
    ) else {
        return Err(refuse(
            dir,
            &checked,
            "refusing to sign a dossier that does not verify",
        ));
    };
    let recorded = std::fs::read_to_string(dir.join(FILE_NAME))
        .map_err(|e| e.to_string())
        .and_then(|text| Dossier::parse(FILE_NAME, &text))
        .map_err(Failure::Dossier)?;
    let files = crate::dossier::attest::Files {
        listed: &checked.listed,
        manifest_sha256,
    };
    crate::dossier::attest::sign(dir, (dossier, &recorded.tool), files, key).map_err(|error| {
        Failure::NotWritten {
            path: dir.to_path_buf(),
            error,
        }
    })
}

/// `ppcert package` of a dossier: its files (member packages included) in one `.tar.gz`.
pub(crate) fn package(dir: &Path, top: &str, out: &Path) -> Result<u8, Failure> {
    let checked = check(&Source::Dir(dir.to_path_buf()), None, true);
    if !checked.problems.is_empty() {
        return Err(refuse(
            dir,
            &checked,
            "refusing to package a dossier that does not verify",
        ));
    }
    let mut files: Vec<String> = checked.listed.iter().map(|(_, n)| n.clone()).collect();
    files.push(manifest::FILE_NAME.to_string());
    if dir.join(ATTESTATION).is_file() {
        files.push(ATTESTATION.to_string());
    }
    files.sort();
    crate::attest::package::write(dir, top, &files, out).map_err(|error| Failure::NotWritten {
        path: out.to_path_buf(),
        error,
    })?;
    crate::console::say!("{}", out.display());
    Ok(exit_codes::SUCCESS)
}

/// `ppcert report` of a dossier: its reports written again from the ledger its members give,
/// once everything but the reports verifies.
pub(crate) fn report(dir: &Path) -> Result<u8, Failure> {
    // The attestation aside: reports rendered again are the same bytes it signed.
    let checked = check(&Source::Dir(dir.to_path_buf()), None, false);
    let (Some(dossier), true) = (
        &checked.dossier,
        checked.problems.len() == checked.rerenderable,
    ) else {
        return Err(refuse(
            dir,
            &checked,
            "the dossier is not its members', refusing to re-render",
        ));
    };
    let write = || -> std::io::Result<()> {
        for (name, text) in crate::dossier::render::reports(dossier)? {
            crate::report::write_atomic(&dir.join(name), text.as_bytes())?;
        }
        manifest::write(dir)
    };
    write().map_err(|error| Failure::NotWritten {
        path: dir.to_path_buf(),
        error,
    })?;
    crate::console::say!(
        "{}: reports written again from the dossier's members",
        dir.display()
    );
    Ok(exit_codes::SUCCESS)
}

//! `ppcert keygen`, `sign`, `package` and `verify`: evidence a provider can check without
//! trusting whoever handed it over.

use std::path::{Path, PathBuf};

use crate::attest::bundle::Source;
use crate::attest::dsse::Envelope;
use crate::attest::verify::{Checked, ScenarioCheck, Signed, check};
use crate::attest::{self, Predicate, Statement, keys, package as pack};
use crate::cli::{KeygenArgs, PackageArgs, SignArgs, VerifyArgs};
use crate::error::{Failure, Refusal, Unverified};
use crate::evidence::Evidence;
use crate::exit_codes;
use crate::journal;
use crate::report::manifest::{self, ATTESTATION};
use crate::timestamp::Timestamp;

pub(crate) fn keygen(args: KeygenArgs) -> Result<u8, Failure> {
    let (public, fingerprint) = keys::generate(&args.out)?;
    crate::console::say!(
        "private key: {} (keep it secret: it signs in your name)",
        args.out.display()
    );
    crate::console::say!(
        "public key:  {} (give it to the provider)",
        public.display()
    );
    crate::console::say!("fingerprint: SHA256:{fingerprint}");
    Ok(exit_codes::SUCCESS)
}

pub(crate) fn sign(args: SignArgs) -> Result<u8, Failure> {
    let key = keys::load_signing(&args.key)?;
    let (path, fingerprint) = match args.dir.join(crate::dossier::FILE_NAME).is_file() {
        true => super::dossier::sign(&args.dir, &key, args.force)?,
        false => sign_dir(&args.dir, &key, args.force)?,
    };
    crate::console::say!("signed: {} (key SHA256:{fingerprint})", path.display());
    Ok(exit_codes::SUCCESS)
}

/// Tells each problem, then fails with exit 1.
fn refuse(path: &Path, problems: &[manifest::Problem], what: &'static str) -> Failure {
    for problem in problems {
        crate::console::tell!("{}: {problem}", path.display());
    }
    let count = problems.len();
    Unverified::Problems { count, what }.into()
}

/// Signs the bundle in `dir` after checking it: the statement's predicate is computed again
/// from the journal, never copied from evidence.json. The attestation's path and the key's
/// fingerprint.
pub(crate) fn sign_dir(
    dir: &Path,
    key: &ed25519_dalek::SigningKey,
    force: bool,
) -> Result<(PathBuf, String), Failure> {
    bundle_dir(dir)?;
    let path = dir.join(ATTESTATION);
    if !force && path.symlink_metadata().is_ok() {
        return Err(Refusal::AlreadySigned {
            what: "bundle",
            path,
        }
        .into());
    }
    let source = Source::Dir(dir.to_path_buf());
    let checked = check(&source, None, false);
    let (Some(derived), Some(recorded), Some(manifest_sha256), true) = (
        &checked.derived,
        &checked.recorded,
        &checked.manifest_sha256,
        checked.problems.is_empty(),
    ) else {
        return Err(refuse(
            dir,
            &checked.problems,
            "refusing to sign a bundle that does not verify",
        ));
    };
    let journal_sha256 = source
        .digest(journal::FILE_NAME)
        .map_err(|error| Failure::Io {
            what: journal::FILE_NAME.to_string(),
            error,
        })?;
    let now = Timestamp::now();
    let statement = Statement {
        kind: attest::STATEMENT_TYPE.to_string(),
        subject: attest::subjects(&checked.listed, manifest_sha256),
        predicate_type: attest::PREDICATE_TYPE.to_string(),
        predicate: Predicate {
            issued: Some(crate::attest::verify::issued(&source)),
            ..Predicate::of(derived, &recorded.tool, &journal_sha256, now)
        },
    };
    let payload = serde_json::to_vec(&statement).map_err(|e| Failure::Encode {
        what: "cannot encode the statement",
        error: e.into(),
    })?;
    let fingerprint = keys::fingerprint(&key.verifying_key());
    let envelope = Envelope::sign(&payload, key, &fingerprint);
    let mut text = serde_json::to_string_pretty(&envelope).unwrap_or_default();
    text.push('\n');
    crate::report::write_atomic(&path, text.as_bytes()).map_err(|error| Failure::NotWritten {
        path: path.clone(),
        error,
    })?;
    Ok((path, fingerprint))
}

/// `DIR.tar.gz` beside the bundle: `reports/r1` gives `reports/r1.tar.gz`, `.` gives
/// `../<its name>.tar.gz`.
fn default_package(dir: &Path, top: &str) -> PathBuf {
    match dir.file_name() {
        Some(name) => {
            let mut name = name.to_owned();
            name.push(".tar.gz");
            dir.with_file_name(name)
        }
        None => dir.join("..").join(format!("{top}.tar.gz")),
    }
}

/// A bundle is a directory: anything else is a usage error (exit 2), not a failed check.
fn bundle_dir(dir: &Path) -> Result<(), Failure> {
    match dir.is_dir() {
        true => Ok(()),
        false => Err(Refusal::NotABundleDir {
            dir: dir.to_path_buf(),
        }
        .into()),
    }
}

pub(crate) fn package(args: PackageArgs) -> Result<u8, Failure> {
    let dir = &args.dir;
    bundle_dir(dir)?;
    let source = Source::Dir(dir.clone());
    if crate::dossier::verify::is_dossier(&source) {
        let (top, out) = package_names(&args)?;
        return super::dossier::package(dir, &top, &out);
    }
    let checked = check(&source, None, true);
    if !checked.problems.is_empty() {
        return Err(refuse(
            dir,
            &checked.problems,
            "refusing to package a bundle that does not verify",
        ));
    }
    let (top, out) = package_names(&args)?;
    let mut files: Vec<String> = checked.listed.iter().map(|(_, n)| n.clone()).collect();
    files.push(manifest::FILE_NAME.to_string());
    if checked.signed != Signed::No {
        files.push(ATTESTATION.to_string());
    } else {
        crate::console::tell!(
            "warning: {} is not signed: the provider can check the files agree, not who produced them (ppcert sign {} --key KEY)",
            dir.display(),
            dir.display()
        );
    }
    files.sort();
    let size: u64 = (files.iter())
        .filter_map(|name| dir.join(name).metadata().ok())
        .map(|meta| meta.len())
        .sum();
    if size > crate::bounds::PACKAGE_FILE_BYTES {
        return Err(Refusal::PackageTooLarge {
            dir: dir.to_path_buf(),
            size,
        }
        .into());
    }
    pack::write(dir, &top, &files, &out).map_err(|error| Failure::NotWritten {
        path: out.clone(),
        error,
    })?;
    crate::console::say!("{}", out.display());
    Ok(exit_codes::SUCCESS)
}

/// The package's top directory (the bundle's name) and where it goes, never over a file.
fn package_names(args: &PackageArgs) -> Result<(String, PathBuf), Failure> {
    let dir = &args.dir;
    let top = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().and_then(|n| n.to_str()).map(String::from))
        .unwrap_or_else(|| "bundle".into());
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_package(dir, &top));
    if out.symlink_metadata().is_ok() {
        return Err(Refusal::PackageExists { path: out }.into());
    }
    Ok((top, out))
}

pub(crate) fn verify(args: VerifyArgs) -> Result<u8, Failure> {
    let key = match &args.key {
        Some(path) => Some(keys::load_verifying(path)?),
        None => None,
    };
    if args.dir.symlink_metadata().is_err() {
        return Err(Refusal::NoSuchBundleOrPackage {
            path: args.dir.clone(),
        }
        .into());
    }
    // An archive that cannot be read is a package that does not verify.
    let source = Source::open(&args.dir)?;
    if crate::dossier::verify::is_dossier(&source) {
        return super::dossier::verify(&source, key.as_ref());
    }
    let checked = check(&source, key.as_ref(), true);
    if !checked.problems.is_empty() {
        return Err(refuse(
            source.path(),
            &checked.problems,
            "the bundle does not verify",
        ));
    }
    let (Some(derived), Some(_)) = (&checked.derived, &checked.recorded) else {
        return Err(Refusal::NothingToVerify.into()); // unreachable: no problems means both read
    };
    for line in proven(source.path(), &checked, derived) {
        crate::console::say!("{line}");
    }
    Ok(exit_codes::SUCCESS)
}

/// The outcome in one sentence: verdict, ledger, partner, scenario, run, target.
fn outcome(derived: &Evidence) -> String {
    let run = &derived.run;
    let ledger: Vec<String> = (derived.requirements.iter())
        .map(|r| {
            let met = if r.met { "met" } else { "NOT met" };
            format!("{} {}/{} {met}", r.operation, r.succeeded, r.required)
        })
        .collect();
    let ledger = match ledger.is_empty() {
        true => "no requirements".to_string(),
        false => ledger.join(", "),
    };
    let digest = match run.scenario_sha256.as_str() {
        "" => "none",
        digest => digest,
    };
    format!(
        "verdict {} ({ledger}) for partner \"{}\", scenario {} (sha256 {digest}), run {} from {} to {}, against {} ({})",
        derived.verdict.word(),
        run.partner.name,
        run.scenario,
        run.id,
        run.started_at,
        run.finished_at.map_or("?".into(), |at| at.to_string()),
        run.target.base_url,
        run.target.environment.as_str(),
    )
}

/// What the signature (or its absence) adds: lines for the summary and "proven", and what it
/// leaves unproven.
fn signature_lines(signed: &Signed, what: &str) -> (String, String, Vec<String>) {
    match signed {
        Signed::ByKey {
            fingerprint,
            signed_at,
        } => (
            format!("  signed: by the key SHA256:{fingerprint} (the key you gave), over every file"),
            format!("the holder of key SHA256:{fingerprint} signed these exact files and this {what}"),
            vec![
                format!("who holds the key: compare SHA256:{fingerprint} with the fingerprint the partner gave you over a channel you trust"),
                format!("when it was signed: {signed_at} is the signer's clock"),
            ],
        ),
        Signed::Unchecked { keyids, .. } => (
            format!(
                "  signed: {ATTESTATION} names key(s) {} but no key was given: the signature is NOT checked",
                keyids.join(", ")
            ),
            format!("the files agree with each other and with the attestation's statement: {what}"),
            vec!["who produced the bundle: pass --key KEY.pub (the signer's public key) to check the signature".into()],
        ),
        Signed::No | Signed::Broken => (
            "  signed: no (no attestation.intoto.json)".into(),
            format!("the files agree with each other: {what}"),
            vec!["who produced the bundle, or that it is unaltered: without a signature anyone can rewrite the journal and every file computed from it together (sign with ppcert run --sign-key or ppcert sign)".into()],
        ),
    }
}

/// What was proven and what was not, in plain words.
fn proven(path: &Path, checked: &Checked, derived: &Evidence) -> Vec<String> {
    let run = &derived.run;
    let (signed, proof, mut not) = signature_lines(&checked.signed, &outcome(derived));
    let mut out = vec![
        format!("{}: verified", path.display()),
        format!(
            "  files:  exactly the {} files MANIFEST.sha256 lists, each unchanged; nothing added",
            checked.listed.len()
        ),
        format!(
            "  record: evidence.json agrees with the ledger and verdict computed again from journal.jsonl: {}",
            derived.verdict.word()
        ),
    ];
    match checked.scenario {
        ScenarioCheck::BuiltIn => out.push(format!(
            "  scenario: {} is built into this ppcert, unchanged (same SHA-256), and the ledger counts its requirements",
            run.scenario
        )),
        ScenarioCheck::OtherVersion => not.push(format!(
            "that scenario {} is the one this ppcert holds: its SHA-256 differs (another ppcert version); the requirements are those the run recorded",
            run.scenario
        )),
        _ => not.push(format!(
            "what scenario {} ({}) required: it is not built into ppcert, so its requirements are those the run recorded",
            run.scenario, run.scenario_source
        )),
    }
    out.push(signed);
    out.push("Proven:".into());
    out.push(format!("  - {proof}"));
    not.push("that the exchanges in journal.jsonl happened as written: ppcert records what it sent and received, and the signer vouches for the record".into());
    if run.target.sandbox {
        not.push("that this is certification evidence: the answers came from ppcert's sandbox, not the provider's staging".into());
    }
    if !run.complete {
        not.push("a finished run: it was interrupted (verdict INCOMPLETE)".into());
    }
    out.push("Not proven:".into());
    out.extend(not.into_iter().map(|line| format!("  - {line}")));
    out
}

//! `ppcert report`: re-render a finished run's reports from the record its journal confirms.

use crate::attest::bundle::Source;
use crate::attest::verify::check;
use crate::cli::ReportArgs;
use crate::error::{Failure, Unverified};
use crate::exit_codes;
use crate::report::{self, Format, manifest};

pub(crate) fn report(args: ReportArgs) -> Result<u8, Failure> {
    // Re-rendering rewrites the manifest, so it must not bless a changed record: without a
    // manifest nothing says the record is the run's.
    if !args.dir.join(manifest::FILE_NAME).exists() {
        return Err(Unverified::NoManifest {
            dir: args.dir.clone(),
        }
        .into());
    }
    let source = Source::Dir(args.dir.clone());
    if crate::dossier::verify::is_dossier(&source) {
        return super::dossier::report(&args.dir);
    }
    let checked = check(&source, None, false);
    // A changed or missing report is what re-rendering is for; anything else means the record
    // is not the run's, and a re-render (with a fresh manifest) would vouch for it.
    let refused: Vec<&str> = (checked.problems.iter())
        .filter(|p| !p.rerenderable)
        .map(|p| p.message.as_str())
        .collect();
    let (Some(_), Some(derived), true) = (checked.recorded, checked.derived, refused.is_empty())
    else {
        return Err(refuse(&args.dir, &refused));
    };
    let mut evidence = match read_record(&source) {
        Ok(evidence) => evidence,
        Err(e) => return Err(refuse(&args.dir, &[e.as_str()])),
    };
    let journal = args.dir.join(crate::journal::FILE_NAME);
    evidence.with_exchanges_in_journal(journal, checked.exchanges);
    // What the reports show of the outcome is what the journal gives, never a stored field.
    evidence.verdict = derived.verdict;
    evidence.requirements = derived.requirements;
    evidence.run = derived.run;
    evidence.flows = derived.flows;
    let formats: Vec<Format> = if args.format.is_empty() {
        Format::ALL.to_vec()
    } else {
        args.format.iter().flatten().copied().collect()
    };
    report::write_reports(&args.dir, &evidence, &formats).map_err(|error| Failure::Io {
        what: args.dir.display().to_string(),
        error,
    })?;
    for format in &formats {
        crate::console::say!("{}", args.dir.join(format.file_name()).display());
    }
    if args.dir.join(manifest::ATTESTATION).exists()
        && !check(&source, None, true).problems.is_empty()
    {
        crate::console::tell!(
            "warning: the re-rendered files no longer match {}: sign again (ppcert sign {} --key KEY --force)",
            manifest::ATTESTATION,
            args.dir.display()
        );
    }
    Ok(exit_codes::SUCCESS)
}

/// The record as evidence.json holds it but for its exchanges (the check read it without what
/// grows with the run): the reports read the exchanges from the journal one at a time, whole,
/// as a run's own reports show them (the check found the journal's equal to evidence.json's).
fn read_record(source: &Source) -> Result<crate::evidence::Evidence, String> {
    use crate::evidence::read::{Skip, head};
    use crate::evidence::{EvidenceError, FILE_NAME};
    let reader = (source.reader(FILE_NAME)).map_err(|error| {
        let name = FILE_NAME.into();
        EvidenceError::Unreadable { name, error }.to_string()
    })?;
    head(FILE_NAME, reader, Skip::Exchanges).map_err(|e| e.to_string())
}

fn refuse(dir: &std::path::Path, refused: &[&str]) -> Failure {
    for problem in refused {
        crate::console::tell!("{}: {problem}", dir.display());
    }
    Unverified::NotTheRuns {
        dir: dir.to_path_buf(),
        refused: refused.iter().map(|r| r.to_string()).collect(),
    }
    .into()
}

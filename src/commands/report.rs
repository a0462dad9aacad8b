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
    let (Some(mut evidence), Some(derived), true) =
        (checked.recorded, checked.derived, refused.is_empty())
    else {
        return Err(refuse(&args.dir, &refused));
    };
    // The check read the record without holding its exchanges; the reports show them.
    let read = (source.reader(crate::evidence::FILE_NAME))
        .map_err(|error| crate::evidence::EvidenceError::Unreadable {
            name: crate::evidence::FILE_NAME.into(),
            error,
        })
        .and_then(|reader| {
            crate::evidence::read::all_exchanges(crate::evidence::FILE_NAME, reader)
        });
    evidence.exchanges = match read {
        Ok(exchanges) => exchanges,
        Err(e) => return Err(refuse(&args.dir, &[e.to_string().as_str()])),
    };
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

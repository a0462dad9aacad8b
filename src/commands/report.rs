//! `ppcert report` and `ppcert verify`: re-render a finished run, check a bundle's integrity.

use crate::cli::{ReportArgs, VerifyArgs};
use crate::error::Failure;
use crate::evidence::{self, Evidence};
use crate::exit_codes;
use crate::journal;
use crate::report::{self, Format, manifest};

pub fn report(args: ReportArgs) -> Result<u8, Failure> {
    // Re-rendering rewrites the manifest, so it must not bless a changed record: without a
    // manifest nothing says the record is the run's.
    if !args.dir.join(manifest::FILE_NAME).exists() {
        return Err(Failure::new(
            exit_codes::REQUIREMENT_NOT_MET,
            format!(
                "{}: no {} to check the record against, refusing to re-render (a fresh manifest would vouch for whatever the files hold now)",
                args.dir.display(),
                manifest::FILE_NAME
            ),
        ));
    }
    {
        let problems = manifest::verify(&args.dir).map_err(Failure::usage)?;
        let record: Vec<&String> = problems
            .iter()
            .filter(|p| p.starts_with(evidence::FILE_NAME) || p.starts_with(journal::FILE_NAME))
            .collect();
        if !record.is_empty() {
            let list: Vec<&str> = record.iter().map(|s| s.as_str()).collect();
            return Err(Failure::new(
                exit_codes::REQUIREMENT_NOT_MET,
                format!(
                    "{}: the record changed since the run, refusing to re-render: {}",
                    args.dir.display(),
                    list.join("; ")
                ),
            ));
        }
    }
    let evidence = Evidence::read(&args.dir.join(evidence::FILE_NAME)).map_err(Failure::usage)?;
    let formats: Vec<Format> = if args.format.is_empty() {
        Format::ALL.to_vec()
    } else {
        args.format.iter().flatten().copied().collect()
    };
    report::write_reports(&args.dir, &evidence, &formats)
        .map_err(|e| Failure::usage(format!("{}: {e}", args.dir.display())))?;
    for format in &formats {
        crate::say!("{}", args.dir.join(format.file_name()).display());
    }
    Ok(exit_codes::SUCCESS)
}

pub fn verify(args: VerifyArgs) -> Result<u8, Failure> {
    let problems = manifest::verify(&args.dir).map_err(Failure::usage)?;
    if problems.is_empty() {
        crate::say!(
            "{}: every file matches {}",
            args.dir.display(),
            manifest::FILE_NAME
        );
        return Ok(exit_codes::SUCCESS);
    }
    for problem in &problems {
        crate::tell!("{}: {problem}", args.dir.display());
    }
    Err(Failure::new(
        exit_codes::REQUIREMENT_NOT_MET,
        format!(
            "{} problem(s): the bundle is not as the run wrote it",
            problems.len()
        ),
    ))
}

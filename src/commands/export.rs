//! `ppcert export --har BUNDLE [--out FILE]`: a verified bundle's exchanges as HAR 1.2.

use crate::attest::bundle::Source;
use crate::attest::verify::check;
use crate::cli::ExportArgs;
use crate::error::{Failure, Refusal};
use crate::exit_codes;
use crate::journal;

pub(crate) fn export(args: ExportArgs) -> Result<u8, Failure> {
    let name = args.bundle.display().to_string();
    let source = Source::open(&args.bundle).map_err(|error| Failure::Unexportable {
        name: name.clone(),
        error,
    })?;
    // What is exported must be the run's record: a bundle that does not verify is refused.
    let problems = check(&source, None, true).problems;
    if let Some(first) = problems.first() {
        return Err(Refusal::ExportUnverified {
            name,
            count: problems.len(),
            first: first.message.clone(),
        }
        .into());
    }
    let lines = source
        .reader(journal::FILE_NAME)
        .map_err(|error| Failure::Io {
            what: format!("{name}: {}", journal::FILE_NAME),
            error,
        })?;
    let written = match &args.out {
        Some(path) => {
            let cannot = |error| Failure::Io {
                what: path.display().to_string(),
                error,
            };
            // Never over an existing file (nor through a symbolic link planted there).
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(cannot)?;
            let mut out = std::io::BufWriter::new(file);
            let count = crate::har::write(lines, &mut out).map_err(cannot)?;
            std::io::Write::flush(&mut out).map_err(cannot)?;
            crate::console::tell!("{}: {count} entries", path.display());
            count
        }
        None => {
            let mut out = std::io::stdout().lock();
            match crate::har::write(lines, &mut out) {
                // A reader that stopped early (`| head`) wanted no more.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
                other => other.map_err(|error| Failure::Io {
                    what: "stdout".into(),
                    error,
                })?,
            }
        }
    };
    let _ = written;
    Ok(exit_codes::SUCCESS)
}

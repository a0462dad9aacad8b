//! The bundle directory every recording command writes: where a new one goes (never over a
//! run or other files), its journal's first line, and publishing the evidence and reports at
//! the end. `run` and `proxy` share these; neither reaches into the other.

use std::path::{Path, PathBuf};

use crate::error::{Failure, Refusal};
use crate::evidence::collect::Recording;
use crate::evidence::{Evidence, RunInfo};
use crate::journal::{self, Journal, Line};
use crate::scenario::Requirement;
use crate::timestamp::Timestamp;

/// Where a new bundle goes: `--out`, else `reports/<id>`; never over a run or other files.
pub(crate) fn new_bundle_dir(out: Option<&Path>, id: &str) -> Result<PathBuf, Failure> {
    let dir = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new("reports").join(id));
    if dir.join(journal::FILE_NAME).exists() {
        return Err(Refusal::HoldsARun { dir }.into());
    }
    let foreign = std::fs::read_dir(&dir)
        .map(|mut entries| entries.next().is_some())
        .unwrap_or(false);
    if foreign {
        return Err(Refusal::OutNotEmpty { dir }.into());
    }
    Ok(dir)
}

/// The planned successes per required operation, for the progress bars.
/// Opens the journal and writes its first line: the run itself, or where a resumed run picked up.
pub(crate) fn open_journal(dir: &Path, run: &RunInfo, resumed: bool) -> Result<Journal, Failure> {
    let cannot_write = |path: &Path, error| Failure::JournalNotOpened {
        path: path.to_path_buf(),
        error,
    };
    let mut journal = Journal::open(dir, resumed).map_err(|e| cannot_write(dir, e))?;
    let header = if resumed {
        Line::Resumed {
            at: Timestamp::now(),
        }
    } else {
        Line::Run {
            run: serde_json::to_value(run).unwrap_or_default(),
        }
    };
    journal
        .append(&header)
        .map_err(|e| cannot_write(journal.path(), e))?;
    Ok(journal)
}

/// A bundle that could not be written (a full disk, a folder that went away): the run's
/// journal still holds everything.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot write the bundle: {error}", dir.display())]
pub(crate) struct BundleNotWritten {
    dir: std::path::PathBuf,
    error: std::io::Error,
}

/// Ends the journal, then writes the bundle: the journal is complete before the manifest hashes it.
pub(crate) fn publish(
    dir: &Path,
    evidence: &mut Evidence,
    recording: &Recording,
    requirements: &[Requirement],
    formats: &[crate::report::Format],
    rendered: Option<&crate::report::prerender::Rendered>,
) -> Result<(), BundleNotWritten> {
    // The end line carries what the verdict is computed from besides the exchanges and steps,
    // so `ppcert verify` can compute it again from the journal alone.
    recording.write_line(&Line::End {
        at: evidence.run.finished_at.unwrap_or_else(Timestamp::now),
        complete: evidence.run.complete,
        requirements: Some(requirements.to_vec()),
        flows: Some(evidence.flows.clone()),
    });
    // Taken after the end line: the journal is complete.
    let journal = (recording.journal_sha256()).map(|digest| (journal::FILE_NAME, digest));
    // Failpoint for the test of a bundle that cannot be written (hidden, tests only).
    let failpoint = crate::env::failpoint("PPCERT_TEST_FAIL_BUNDLE").map(|_| {
        std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            "failpoint PPCERT_TEST_FAIL_BUNDLE",
        )
    });
    failpoint
        .map_or_else(
            || crate::report::write_bundle(dir, evidence, formats, rendered, journal),
            Err,
        )
        .map_err(|error| BundleNotWritten {
            dir: dir.to_path_buf(),
            error,
        })?;
    if let Err(e) = crate::report::append_step_summary(dir) {
        crate::console::tell!("warning: cannot append to $GITHUB_STEP_SUMMARY: {e}");
    }
    Ok(())
}

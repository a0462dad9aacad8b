//! `ppcert diff BASE NEW` and `ppcert diff --run BASE NEW --proxy BASE NEW`: what changed
//! between two verified bundles, and which side changed. Exit 0 no regression, 1 a
//! regression, 2 a bundle that cannot be read or does not verify.

use std::path::PathBuf;

use crate::cli::DiffArgs;
use crate::drift::{self, attribution};
use crate::error::{Failure, Judgement, Refusal};

pub(crate) fn diff(args: DiffArgs) -> Result<u8, Failure> {
    let pair = |paths: &Option<Vec<PathBuf>>| -> Option<(PathBuf, PathBuf)> {
        match paths.as_deref() {
            Some([base, new]) => Some((base.clone(), new.clone())),
            _ => None,
        }
    };
    if let (Some(run), Some(proxy)) = (pair(&args.run), pair(&args.proxy)) {
        let found = attribution::attribute(
            drift::diff(&run.0, &run.1)?,
            drift::diff(&proxy.0, &proxy.1)?,
        );
        print(args.json, &found, || attribution::render(&found))?;
        return Ok(code(found.regressed()));
    }
    let (Some(base), Some(new)) = (&args.base, &args.new) else {
        return Err(Refusal::DiffOperands.into());
    };
    let (base, new) = (latest_of(base)?, latest_of(new)?);
    let compared = drift::diff(&base, &new)?;
    print(args.json, &compared, || {
        drift::text::render(&compared.drift, &compared.new)
    })?;
    Ok(code(compared.drift.regressed()))
}

/// A dossier (`ppcert dossier`) is compared by the bundle added to it last, kept inside it
/// as a package; any other path as it is.
fn latest_of(path: &std::path::Path) -> Result<PathBuf, Failure> {
    let record = path.join(crate::dossier::FILE_NAME);
    if !record.is_file() {
        return Ok(path.to_path_buf());
    }
    let dossier = std::fs::read_to_string(&record)
        .map_err(|e| e.to_string())
        .and_then(|text| crate::dossier::Dossier::parse(&record.display().to_string(), &text))
        .map_err(Failure::Dossier)?;
    let latest = (dossier.members.last())
        .ok_or_else(|| Failure::Dossier(format!("{}: a dossier with no bundle", path.display())))?;
    crate::console::tell!(
        "{}: a dossier; comparing the bundle added last, run {} ({})",
        path.display(),
        latest.run_id,
        latest.file
    );
    Ok(path.join(&latest.file))
}

fn code(regressed: bool) -> u8 {
    Judgement::of(!regressed).exit_code()
}

fn print(
    json: bool,
    value: &impl serde::Serialize,
    text: impl FnOnce() -> String,
) -> Result<(), Failure> {
    if json {
        let out = serde_json::to_string_pretty(value).map_err(|e| Failure::Encode {
            what: "cannot write JSON",
            error: e.into(),
        })?;
        crate::console::say!("{out}");
    } else {
        crate::console::say!("{}", text().trim_end());
    }
    Ok(())
}

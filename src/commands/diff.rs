//! `ppcert diff BASE NEW` and `ppcert diff --run BASE NEW --proxy BASE NEW`: what changed
//! between two verified bundles, and which side changed. Exit 0 no regression, 1 a
//! regression, 2 a bundle that cannot be read or does not verify.

use std::path::PathBuf;

use crate::cli::DiffArgs;
use crate::drift::{self, attribution};
use crate::error::Failure;
use crate::exit_codes;

/// A bundle that cannot be compared is a usage error (2): the comparison never happened,
/// and 1 must keep meaning "regressed".
impl From<drift::LoadError> for Failure {
    fn from(error: drift::LoadError) -> Failure {
        Failure::usage(error)
    }
}

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
        return Err(Failure::usage(
            "diff needs BASE and NEW, or --run BASE NEW --proxy BASE NEW",
        ));
    };
    let compared = drift::diff(base, new)?;
    print(args.json, &compared, || {
        drift::text::render(&compared.drift, &compared.new)
    })?;
    Ok(code(compared.drift.regressed()))
}

fn code(regressed: bool) -> u8 {
    if regressed {
        exit_codes::REQUIREMENT_NOT_MET
    } else {
        exit_codes::SUCCESS
    }
}

fn print(
    json: bool,
    value: &impl serde::Serialize,
    text: impl FnOnce() -> String,
) -> Result<(), Failure> {
    if json {
        let out = serde_json::to_string_pretty(value)
            .map_err(|e| Failure::usage(format!("cannot write JSON: {e}")))?;
        crate::console::say!("{out}");
    } else {
        crate::console::say!("{}", text().trim_end());
    }
    Ok(())
}

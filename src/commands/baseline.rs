//! `run --baseline` and `proxy --baseline`: the baseline read and verified before anything
//! is sent, the new bundle compared with it before its evidence is written (so evidence.json
//! and every report carry the section); the session's outcome reads whether it regressed.

use std::path::Path;

use crate::attest::bundle::Source;
use crate::drift::{self, Profile};
use crate::error::Failure;
use crate::evidence::{Evidence, Verdict};

/// `--baseline`'s bundle as a run compares with it, and whether `--accept-drift` accepts what
/// regressed since.
pub(crate) struct Baseline {
    pub profile: Profile,
    pub accept_drift: bool,
}

/// The baseline's profile; a bundle that cannot be read, does not verify, or did not pass
/// is exit 2 (a run compared with a failed one would "regress" by passing).
pub(crate) fn load(path: Option<&Path>, accept_drift: bool) -> Result<Option<Baseline>, Failure> {
    let Some(path) = path else { return Ok(None) };
    let profile = drift::load(path).map_err(Failure::Baseline)?;
    if profile.verdict != Verdict::Passed {
        return Err(Failure::Baseline(drift::LoadError::NotPassed {
            path: path.display().to_string(),
            verdict: profile.verdict.word().to_string(),
        }));
    }
    Ok(Some(Baseline {
        profile,
        accept_drift,
    }))
}

/// Compares what the run recorded (its journal in `dir`, its outcome in `evidence`) with
/// `base`, and stores the result in the evidence. A journal that cannot be read back leaves
/// the section out and says so: the run itself is not lost over it.
pub(crate) fn attach(dir: &Path, evidence: &mut Evidence, base: Option<&Baseline>) {
    let Some(base) = base else { return };
    let source = Source::Dir(dir.to_path_buf());
    match Profile::read(&source, dir.display().to_string(), evidence, evidence) {
        Ok(new) => {
            let mut drift = drift::compare(&base.profile, &new);
            drift.accepted = base.accept_drift && drift.regressed();
            evidence.baseline = Some(drift);
        }
        Err(e) => crate::console::tell!(
            "warning: cannot compare with the baseline ({}: {e}); the reports have no \"Since the baseline\" section",
            dir.display()
        ),
    }
}

/// Tells the drift after the run's summary: on stdout, or on stderr when stdout holds the
/// `--json` summary alone.
pub(crate) fn tell(evidence: &Evidence, json: bool) {
    let Some(drift) = &evidence.baseline else {
        return;
    };
    let mut text = format!("since the baseline {}:\n", drift.base.bundle);
    drift::text::findings(&mut text, drift);
    if drift.accepted {
        text.push_str("accepted (--accept-drift): recorded in evidence.json, not failing the run; this bundle can be the next baseline\n");
    }
    if json {
        crate::console::tell!("{}", text.trim_end());
    } else {
        crate::console::say!("{}", text.trim_end());
    }
}

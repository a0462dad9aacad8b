//! How a session ends, for `run` and `proxy` alike: compared with the baseline, the bundle
//! written, how it went said (text or `--json`), the bundle signed (`--sign-key`), added to the
//! dossier (`--dossier`); one [`Outcome`], whose variant alone is the exit code.

use std::path::Path;

use ed25519_dalek::SigningKey;

use super::baseline::Baseline;
use crate::error::{Failure, FirstCall, Outcome, RunOutcome};
use crate::evidence::collect::Recording;
use crate::evidence::{Evidence, Verdict};
use crate::journal;
use crate::output::{OutputMode, ProgressMode};
use crate::scenario::Requirement;

/// What a session ends with, chosen by its flags.
pub(crate) struct Ending<'a> {
    pub dir: &'a Path,
    pub mode: &'a OutputMode,
    pub baseline: Option<&'a Baseline>,
    pub signer: Option<&'a SigningKey>,
    pub dossier: Option<&'a Path>,
}

/// What the bundle is written from.
pub(crate) struct Record<'a> {
    pub recording: &'a Recording,
    pub requirements: &'a [Requirement],
    pub formats: &'a [crate::report::Format],
    /// report.html's exchange blocks a small run rendered while it went on.
    pub rendered: Option<&'a crate::report::prerender::Rendered>,
}

/// How the session itself went, besides its verdict.
pub(crate) struct Went {
    pub written: bool,
    pub interrupted: bool,
    pub first_call: FirstCall,
    /// `proxy -- COMMAND`: the suite's own failing code.
    pub suite_failed: Option<u8>,
}

impl Ending<'_> {
    /// Compares the record with the baseline (so the bundle carries the section) and writes
    /// the bundle; whether it was written. A bundle not written is said here: the journal
    /// holds what was recorded.
    pub(crate) fn write(&self, evidence: &mut Evidence, record: Record<'_>) -> bool {
        super::baseline::attach(self.dir, evidence, self.baseline);
        let published = super::bundle::publish(
            self.dir,
            evidence,
            record.recording,
            record.requirements,
            record.formats,
            record.rendered,
        );
        if let Err(error) = &published {
            crate::console::tell!(
                "error: {error}; the requests were sent and {} holds what was recorded",
                self.dir.join(journal::FILE_NAME).display()
            );
        }
        published.is_ok()
    }

    /// Says how the session went, signs the bundle and joins the dossier when asked; the
    /// session's one outcome.
    pub(crate) fn conclude(&self, evidence: &Evidence, went: Went) -> Result<Outcome, Failure> {
        let outcome = Outcome::of(&RunOutcome {
            bundle_written: went.written,
            interrupted: went.interrupted,
            first_call: went.first_call,
            passed: evidence.verdict == Verdict::Passed,
            regressed: evidence.baseline.as_ref().is_some_and(|d| d.fails()),
        });
        explain_first_call(went.first_call);
        let outcome = outcome.with_suite(went.suite_failed);
        if self.mode.json {
            let json = crate::output::summary_json(evidence, self.dir, outcome.exit_code());
            crate::console::say!("{json}");
        } else if went.written {
            crate::console::say!("{}", crate::output::summary(self.mode, evidence, self.dir));
        }
        super::baseline::tell(evidence, self.mode.json);
        if !went.written {
            return Ok(outcome);
        }
        self.sign()?;
        match self.dossier {
            Some(dossier) => {
                let passed = super::dossier_run::join(dossier, self.dir, self.signer)?;
                Ok(outcome.with_dossier(passed))
            }
            None => Ok(outcome),
        }
    }

    /// Signs the bundle when a key was given (an unsigned bundle where a signed one was asked
    /// for is a bundle not written); without one, warns of an attestation the session made
    /// stale.
    fn sign(&self) -> Result<(), Failure> {
        let dir = self.dir;
        let Some(key) = self.signer else {
            let stale = dir.join(crate::report::manifest::ATTESTATION);
            if stale.exists() {
                crate::console::tell!(
                    "warning: {} was signed before this session and no longer matches the bundle; sign again (ppcert sign {} --key KEY --force)",
                    stale.display(),
                    dir.display()
                );
            }
            return Ok(());
        };
        // A resumed run rewrote its bundle: the earlier attestation is replaced.
        let (path, fingerprint) = super::attest::sign_dir(dir, key, true)
            .map_err(|failure| Failure::NotSigned(Box::new(failure)))?;
        // On stderr: with --json, stdout holds the summary object alone.
        if self.mode.progress != ProgressMode::Quiet {
            crate::console::tell!("signed: {} (key SHA256:{fingerprint})", path.display());
        }
        Ok(())
    }
}

fn explain_first_call(first_call: FirstCall) {
    match first_call {
        FirstCall::TokenRejected => {
            crate::console::tell!(
                "error: the token was rejected (401); the failed exchange above quotes the server"
            )
        }
        FirstCall::Unreachable => crate::console::tell!("error: the target could not be reached"),
        FirstCall::NotTheApi => crate::console::tell!(
            "error: the first call (POST …/quotes) answered 404, so the base URL is not the API root and the run stopped there; check --base-url: it should include the API's path prefix (for example https://staging.example.com/partner-api)"
        ),
        FirstCall::Answered => {}
    }
}

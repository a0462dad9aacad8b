//! `run --dossier DIR` and `proxy --dossier DIR`: what the dossier still lacks decides what a
//! run sends (nothing when it lacks nothing), and the new bundle joins the dossier after.

use std::path::Path;

use ed25519_dalek::SigningKey;

use super::dossier::{add, open, verdict_code};
use crate::config::{RunConfig, Target};
use crate::dossier::summary::summary;
use crate::dossier::{Dossier, ledger, plan};
use crate::error::{Failure, Refusal};
use crate::exit_codes;
use crate::scenario::{LoadedScenario, ScenarioSource};

/// Narrows the run's scenario to what the dossier at `dir` lacks. `false` when it lacks
/// nothing: then nothing is to be sent.
pub(crate) fn narrow(dir: &Path, config: &mut RunConfig) -> Result<bool, Failure> {
    let Some(members) = open(dir)? else {
        crate::console::tell!(
            "dossier {}: none yet; this run starts it with the whole scenario",
            dir.display()
        );
        return Ok(true);
    };
    let dossier = ledger::compute(&members);
    same_target(dir, &dossier, config)?;
    let missing = dossier.missing();
    if missing.is_empty() {
        crate::console::say!(
            "dossier {}: every requirement is met already (verdict {}); nothing to send, no request sent",
            dir.display(),
            dossier.verdict.word()
        );
        return Ok(false);
    }
    let loaded = &config.scenario;
    let (reduced, unmakeable) = plan::reduce(&loaded.scenario, &missing, config.flight_seller);
    if !unmakeable.is_empty() {
        let names: Vec<&str> = unmakeable.iter().map(|op| op.as_str()).collect();
        return Err(Refusal::MakesNothing {
            dir: dir.to_path_buf(),
            scenario: loaded.scenario.name.clone(),
            missing: names.join(", "),
        }
        .into());
    }
    let flows: Vec<String> = (reduced.flows.iter())
        .map(|f| format!("{} x{}", f.name, f.repeat))
        .collect();
    crate::console::tell!(
        "dossier {}: {}; sending only: {}",
        dir.display(),
        reduced.description,
        flows.join(", ")
    );
    let text = serde_json::to_string(&reduced).unwrap_or_default();
    config.scenario = LoadedScenario {
        source: ScenarioSource::File(format!(
            "<what dossier {} lacked, from {}>",
            dir.display(),
            loaded.source
        )),
        sha256: crate::digest::sha256_hex(text.as_bytes()),
        scenario: reduced,
    };
    Ok(true)
}

/// Refuses, before anything is sent, a run whose partner, target or environment is not the
/// dossier's (the embedded sandbox's address is known only once started: checked on joining).
fn same_target(dir: &Path, dossier: &Dossier, config: &RunConfig) -> Result<(), Failure> {
    let refuse = |what: String| -> Failure {
        Refusal::CannotJoin {
            dir: dir.to_path_buf(),
            what,
        }
        .into()
    };
    if config.partner_name != dossier.partner.name {
        return Err(refuse(format!(
            "partner \"{}\", not the dossier's \"{}\"",
            config.partner_name, dossier.partner.name
        )));
    }
    if let Target::Remote {
        base_url,
        environment,
        ..
    } = &config.target
    {
        let ours = dossier.target.base_url.trim_end_matches('/');
        if base_url.as_str().trim_end_matches('/') != ours {
            return Err(refuse(format!(
                "target {base_url}, not the dossier's {ours}"
            )));
        }
        if *environment != dossier.target.environment {
            return Err(refuse(format!(
                "environment {}, not the dossier's {}",
                environment.as_str(),
                dossier.target.environment.as_str()
            )));
        }
    }
    Ok(())
}

/// Adds the bundle at `bundle` to the dossier at `dir`, signing the dossier with `signer` when
/// given; whether the dossier passed (every requirement met across its bundles).
pub(crate) fn join(
    dir: &Path,
    bundle: &Path,
    signer: Option<&SigningKey>,
) -> Result<bool, Failure> {
    let dossier = add(dir, &[bundle.to_path_buf()], None)?;
    if let Some(key) = signer {
        let (path, fingerprint) = super::dossier::sign(dir, key, true)?;
        crate::console::tell!("signed: {} (key SHA256:{fingerprint})", path.display());
    }
    // On stderr: stdout holds the run's own summary (a JSON object alone with --json).
    (summary(dir, &dossier).iter()).for_each(|line| crate::console::tell!("{line}"));
    Ok(verdict_code(&dossier) == exit_codes::SUCCESS)
}

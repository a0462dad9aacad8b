//! What `ppcert verify` checks of a bundle or package: the exact file set against the
//! manifest, the record against the verdict computed again from the journal, and the
//! attestation's signature, subjects and predicate.

use ed25519_dalek::VerifyingKey;

use super::bundle::{Digests, Source, has_file};
use super::dsse::Envelope;
use super::{AttestationError, PREDICATE_TYPE, Predicate, STATEMENT_TYPE, Statement};
use crate::evidence::{self, Evidence};
use crate::journal;
use crate::report::manifest::{self, ATTESTATION, Problem};
use crate::timestamp::Timestamp;

/// What a check of the attestation found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Signed {
    /// No attestation.intoto.json.
    No,
    /// Read and consistent with the bundle, but no key was given to check the signature.
    Unchecked {
        keyids: Vec<String>,
        signed_at: Timestamp,
    },
    /// A signature by the given key holds, and the statement matches the bundle.
    ByKey {
        fingerprint: String,
        signed_at: Timestamp,
    },
    /// The attestation is there but does not hold (the problems say why).
    Broken,
}

/// Everything a check found.
pub(crate) struct Checked {
    pub problems: Vec<Problem>,
    /// The record as computed again from the journal, when the journal could be read.
    pub derived: Option<Evidence>,
    /// The record as evidence.json holds it, without what grows with the run (its
    /// exchanges, steps and bookings: read them again one at a time, or whole).
    pub recorded: Option<Evidence>,
    /// How many exchanges the journal holds, when the record could be computed again.
    pub exchanges: usize,
    /// The manifest's lines (digest, name).
    pub listed: Vec<(String, String)>,
    pub manifest_sha256: Option<String>,
    pub signed: Signed,
    pub scenario: ScenarioCheck,
}

/// What can be said of the run's scenario, and so of the requirements its ledger counts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ScenarioCheck {
    /// Not read (the record could not be computed again).
    Unknown,
    /// Built into this ppcert, the same text (same SHA-256), the same requirements.
    BuiltIn,
    /// Named as built in, but another text: another version of ppcert.
    OtherVersion,
    /// A scenario file, or the proxy's traffic: its requirements are what the run recorded.
    NotBuiltIn,
}

/// Holds the run's scenario to this ppcert's copy when it names a built-in one: the same text
/// must have required the same counts, else the journal's requirements were edited.
fn scenario_check(derived: &Evidence, problems: &mut Vec<Problem>) -> ScenarioCheck {
    use crate::scenario::{BUILTIN, ScenarioSource, builtin};
    let run = &derived.run;
    let ScenarioSource::BuiltIn(name) = ScenarioSource::parse(&run.scenario_source) else {
        return ScenarioCheck::NotBuiltIn;
    };
    let Some(loaded) = (BUILTIN.iter())
        .find(|(n, _)| *n == name)
        .and_then(|(n, text)| builtin(n, text).ok())
    else {
        return ScenarioCheck::OtherVersion;
    };
    if loaded.sha256 != run.scenario_sha256 {
        return ScenarioCheck::OtherVersion;
    }
    let expected: Vec<_> = (loaded.scenario.requirements.iter())
        .filter(|r| run.partner.flight_seller || !r.flight_sellers_only)
        .map(|r| (r.operation, r.required))
        .collect();
    // The resilience row is a plan's, not the scenario's (and graded again on its own).
    let counted: Vec<_> = (derived.requirements.iter())
        .filter_map(|r| Some((r.operation.operation()?, r.required)))
        .collect();
    if expected != counted {
        problems.push(problem(format!(
            "{}: the requirements it records are not those of the built-in scenario {name} it names (same SHA-256): the journal was edited",
            journal::FILE_NAME
        )));
    }
    ScenarioCheck::BuiltIn
}

fn problem(message: String) -> Problem {
    Problem {
        message,
        rerenderable: false,
    }
}

/// Checks `source`; with `key`, the attestation must hold a signature by it. `attestation`
/// false leaves the attestation aside (`ppcert sign --force` replaces it).
pub(crate) fn check(source: &Source, key: Option<&VerifyingKey>, attestation: bool) -> Checked {
    let mut problems = source.archive_problems();
    let mut checked = Checked {
        problems: Vec::new(),
        derived: None,
        recorded: None,
        exchanges: 0,
        listed: Vec::new(),
        manifest_sha256: None,
        signed: Signed::No,
        scenario: ScenarioCheck::Unknown,
    };
    let entries = match source.entries() {
        Ok(entries) => entries,
        Err(e) => {
            problems.push(problem(e.to_string()));
            checked.problems = problems;
            return checked;
        }
    };
    let mut digests = Digests::new(source);
    let mut digest = |name: &str| digests.of(name);
    if has_file(&entries, manifest::FILE_NAME) {
        match source.read_to_string(manifest::FILE_NAME) {
            Ok(text) => {
                problems.extend(manifest::check(&text, &entries, &mut digest));
                checked.listed = manifest::parse(&text).0;
                checked.manifest_sha256 = digest(manifest::FILE_NAME).ok();
            }
            Err(e) => problems.push(problem(e.to_string())),
        }
    } else {
        problems.push(problem(format!(
            "{}: missing (or not a regular file): nothing says which files the bundle holds",
            manifest::FILE_NAME
        )));
    }
    rederive(source, &entries, &mut checked, &mut problems);
    if attestation && entries.iter().any(|e| e.name == ATTESTATION) {
        let journal_sha256 = digest(journal::FILE_NAME).unwrap_or_default();
        checked.signed = attested(source, key, &checked, &journal_sha256, &mut problems);
    } else if key.is_some() {
        problems.push(problem(format!(
            "{ATTESTATION}: missing: the bundle is not signed, so --key has nothing to check"
        )));
    }
    checked.problems = problems;
    checked
}

/// Reads evidence.json and computes the record again from the journal, naming differences.
fn rederive(
    source: &Source,
    entries: &[manifest::Entry],
    checked: &mut Checked,
    problems: &mut Vec<Problem>,
) {
    if !has_file(entries, evidence::FILE_NAME) || !has_file(entries, journal::FILE_NAME) {
        return; // the manifest check already says which is missing
    }
    let unreadable = |error| evidence::EvidenceError::Unreadable {
        name: evidence::FILE_NAME.into(),
        error,
    };
    // The record without its exchanges, steps and bookings, then its steps and exchanges one
    // at a time, each compared with the journal's as it is read: neither file is ever held.
    let recorded = (source.reader(evidence::FILE_NAME).map_err(unreadable)).and_then(|reader| {
        evidence::read::head(evidence::FILE_NAME, reader, evidence::read::Skip::Bulk)
    });
    let recorded = match recorded {
        Ok(recorded) => recorded,
        Err(e) => return problems.push(problem(e.to_string())),
    };
    let journals = source.reader(journal::FILE_NAME).and_then(|journal| {
        let steps = source.reader(journal::FILE_NAME)?;
        Ok((journal, steps))
    });
    let (journal, steps) = match journals {
        Ok(readers) => readers,
        Err(e) => {
            problems.push(problem(format!("{}: cannot read: {e}", journal::FILE_NAME)));
            checked.recorded = Some(recorded);
            return;
        }
    };
    let mut derivation = evidence::derive::Derivation::new(journal, steps, &recorded);
    let streamed = (source.reader(evidence::FILE_NAME).map_err(unreadable)).and_then(|reader| {
        evidence::read::each_item(evidence::FILE_NAME, reader, true, &mut |item| {
            derivation.recorded(item)
        })
    });
    if let Err(e) = streamed {
        return problems.push(problem(e.to_string()));
    }
    match derivation.finish() {
        Ok(rederived) => {
            for difference in rederived.differences {
                problems.push(problem(format!("{}: {difference}", evidence::FILE_NAME)));
            }
            checked.scenario = scenario_check(&rederived.evidence, problems);
            checked.exchanges = rederived.exchanges;
            checked.derived = Some(rederived.evidence);
        }
        Err(e) => problems.push(problem(e.to_string())),
    }
    checked.recorded = Some(recorded);
}

/// The attestation's envelope and the statement it carries.
fn read_attestation(source: &Source) -> Result<(Envelope, Statement), AttestationError> {
    let text = source
        .read_to_string(ATTESTATION)
        .map_err(AttestationError::Unreadable)?;
    let envelope: Envelope = serde_json::from_str(&text).map_err(AttestationError::NotEnvelope)?;
    let statement: Statement =
        serde_json::from_slice(&envelope.payload()?).map_err(AttestationError::NotStatement)?;
    if statement.kind != STATEMENT_TYPE || statement.predicate_type != PREDICATE_TYPE {
        return Err(AttestationError::OtherStatement {
            kind: statement.kind,
            predicate: statement.predicate_type,
        });
    }
    Ok((envelope, statement))
}

/// The identifiers the provider issued, read from the journal of the bundle in `source` (none
/// when it has no journal: that is a problem of its own).
pub(crate) fn issued(source: &Source) -> super::Issued {
    (source.reader(journal::FILE_NAME))
        .map(super::Issued::read)
        .unwrap_or_default()
}

/// Where the statement disagrees with the bundle: its subjects with the files, its predicate
/// with the one computed again from the journal.
fn disagreements(
    statement: &Statement,
    source: &Source,
    checked: &Checked,
    journal_sha256: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(manifest_sha256) = &checked.manifest_sha256 {
        let expected = super::subjects(&checked.listed, manifest_sha256);
        out.extend(subject_differences(&statement.subject, &expected));
    }
    if let (Some(derived), Some(recorded)) = (&checked.derived, &checked.recorded) {
        let signed_at = statement.predicate.signed_at;
        let mut expected = Predicate::of(derived, &recorded.tool, journal_sha256, signed_at);
        // Signed before ppcert listed the provider's identifiers: nothing to compare.
        if statement.predicate.issued.is_some() {
            expected.issued = Some(issued(source));
        }
        if statement.predicate != expected {
            out.push(format!(
                "its predicate (verdict {:?}, ledger, run) is not what the journal gives (verdict {:?})",
                statement.predicate.verdict, expected.verdict
            ));
        }
    }
    out
}

/// Checks the attestation: an in-toto statement in a DSSE envelope, subjects exactly the
/// bundle's files, a predicate equal to the one computed again, and a signature by `key`.
fn attested(
    source: &Source,
    key: Option<&VerifyingKey>,
    checked: &Checked,
    journal_sha256: &str,
    problems: &mut Vec<Problem>,
) -> Signed {
    let mut broken = |why: String| problems.push(problem(format!("{ATTESTATION}: {why}")));
    let (envelope, statement) = match read_attestation(source) {
        Ok(read) => read,
        Err(why) => {
            broken(why.to_string());
            return Signed::Broken;
        }
    };
    let disagreements = disagreements(&statement, source, checked, journal_sha256);
    let consistent = disagreements.is_empty();
    disagreements.into_iter().for_each(&mut broken);
    let signed_at = statement.predicate.signed_at;
    signature(&envelope, key, consistent, signed_at, &mut broken)
}

/// What the envelope's signature comes to: with `key`, it must verify by it (else `broken` is
/// told why); a statement that is not `consistent` with what it signs is broken either way.
pub(crate) fn signature(
    envelope: &Envelope,
    key: Option<&VerifyingKey>,
    consistent: bool,
    signed_at: Timestamp,
    broken: &mut dyn FnMut(String),
) -> Signed {
    match key {
        Some(key) if !envelope.signed_by(key) => {
            broken(format!(
                "no signature in it verifies with the given key (fingerprint {})",
                super::keys::fingerprint(key)
            ));
            Signed::Broken
        }
        _ if !consistent => Signed::Broken,
        Some(key) => Signed::ByKey {
            fingerprint: super::keys::fingerprint(key),
            signed_at,
        },
        None => Signed::Unchecked {
            keyids: envelope
                .signatures
                .iter()
                .map(|s| s.keyid.clone())
                .collect(),
            signed_at,
        },
    }
}

/// How the attested subjects differ from the bundle's files.
fn subject_differences(attested: &[super::Subject], actual: &[super::Subject]) -> Vec<String> {
    let mut out = Vec::new();
    for subject in actual {
        match attested.iter().find(|s| s.name == subject.name) {
            None => out.push(format!("{} is not among its subjects", subject.name)),
            Some(s) if s.digest != subject.digest => out.push(format!(
                "{} changed since it was signed (SHA-256 differs from its subject)",
                subject.name
            )),
            Some(_) => {}
        }
    }
    for subject in attested {
        if !actual.iter().any(|s| s.name == subject.name) {
            out.push(format!("its subject {} is not in the bundle", subject.name));
        }
    }
    let mut names: Vec<&str> = attested.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        out.push("a subject is listed twice".into());
    }
    out
}

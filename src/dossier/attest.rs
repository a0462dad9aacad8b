//! A dossier's attestation: an in-toto statement naming every file of the dossier (member
//! packages included) with ppcert's dossier predicate, computed again from the members when
//! signed and when verified, in the same DSSE envelope as a bundle's.

use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use super::model::{Dossier, DossierRequirement, DossierTarget};
use crate::attest::bundle::Source;
use crate::attest::dsse::Envelope;
use crate::attest::verify::Signed;
use crate::attest::{STATEMENT_TYPE, Subject, keys, subjects};
use crate::evidence::{Partner, Tool, Verdict};
use crate::report::manifest::ATTESTATION;
use crate::timestamp::Timestamp;

/// ppcert's dossier predicate, version 1 (fields below; new fields may be added).
pub(crate) const PREDICATE_TYPE: &str = "https://ppcert.dev/dossier/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Statement {
    #[serde(rename = "_type")]
    kind: String,
    subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    predicate_type: String,
    predicate: Predicate,
}

/// What the dossier comes to, as computed again from its members when signed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Predicate {
    partner: Partner,
    target: DossierTarget,
    verdict: Verdict,
    requirements: Vec<DossierRequirement>,
    members: Vec<MemberDigest>,
    tool: Tool,
    signed_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct MemberDigest {
    file: String,
    run_id: String,
    journal_sha256: String,
}

impl Predicate {
    fn of(dossier: &Dossier, tool: &Tool, signed_at: Timestamp) -> Predicate {
        Predicate {
            partner: dossier.partner.clone(),
            target: dossier.target.clone(),
            verdict: dossier.verdict,
            requirements: dossier.requirements.clone(),
            members: (dossier.members.iter())
                .map(|m| MemberDigest {
                    file: m.file.clone(),
                    run_id: m.run_id.clone(),
                    journal_sha256: m.journal_sha256.clone(),
                })
                .collect(),
            tool: tool.clone(),
            signed_at,
        }
    }
}

/// What a dossier's files are, for its statement: the manifest's lines and its digest.
pub(crate) struct Files<'a> {
    pub listed: &'a [(String, String)],
    pub manifest_sha256: &'a str,
}

/// Writes `dir`'s attestation for `dossier` (computed again from its members); the key's
/// fingerprint.
pub(crate) fn sign(
    dir: &Path,
    dossier: &Dossier,
    tool: &Tool,
    files: Files<'_>,
    key: &SigningKey,
) -> std::io::Result<(PathBuf, String)> {
    let statement = Statement {
        kind: STATEMENT_TYPE.to_string(),
        subject: subjects(files.listed, files.manifest_sha256),
        predicate_type: PREDICATE_TYPE.to_string(),
        predicate: Predicate::of(dossier, tool, Timestamp::now()),
    };
    let payload = serde_json::to_vec(&statement).map_err(std::io::Error::other)?;
    let fingerprint = keys::fingerprint(&key.verifying_key());
    let envelope = Envelope::sign(&payload, key, &fingerprint);
    let mut text = serde_json::to_string_pretty(&envelope).map_err(std::io::Error::other)?;
    text.push('\n');
    let path = dir.join(ATTESTATION);
    crate::report::write_atomic(&path, text.as_bytes())?;
    Ok((path, fingerprint))
}

/// Checks the dossier's attestation against its files and the dossier computed again
/// (`dossier`, recorded by `tool`); each problem is pushed to `problems`.
pub(crate) fn check(
    source: &Source,
    key: Option<&VerifyingKey>,
    dossier: Option<&Dossier>,
    tool: &Tool,
    files: Files<'_>,
    problems: &mut Vec<String>,
) -> Signed {
    let mut broken = |why: String| problems.push(format!("{ATTESTATION}: {why}"));
    let statement = source
        .read_to_string(ATTESTATION)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Envelope>(&text).map_err(|e| e.to_string()))
        .and_then(|envelope| {
            let payload = envelope.payload().map_err(|e| e.to_string())?;
            let statement: Statement = serde_json::from_slice(&payload)
                .map_err(|e| format!("not ppcert's dossier statement: {e}"))?;
            Ok((envelope, statement))
        });
    let (envelope, statement) = match statement {
        Ok(read) => read,
        Err(why) => {
            broken(why);
            return Signed::Broken;
        }
    };
    let mut consistent = true;
    if statement.kind != STATEMENT_TYPE || statement.predicate_type != PREDICATE_TYPE {
        broken(format!(
            "a statement with predicate `{}`, not `{PREDICATE_TYPE}`",
            statement.predicate_type
        ));
        consistent = false;
    }
    if statement.subject != subjects(files.listed, files.manifest_sha256) {
        broken("its subjects are not the dossier's files as they are now (a file changed, came or went since it was signed)".into());
        consistent = false;
    }
    let signed_at = statement.predicate.signed_at;
    if let Some(dossier) = dossier
        && statement.predicate != Predicate::of(dossier, tool, signed_at)
    {
        broken(format!(
            "its predicate (verdict {}) is not what the members give (verdict {})",
            statement.predicate.verdict.word(),
            dossier.verdict.word()
        ));
        consistent = false;
    }
    crate::attest::verify::signature(&envelope, key, consistent, signed_at, &mut broken)
}

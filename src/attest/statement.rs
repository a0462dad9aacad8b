//! The in-toto statement a bundle's attestation signs: its subjects and ppcert's certification predicate.

use serde::{Deserialize, Serialize};

pub(crate) use super::crosscheck::Issued;
use crate::evidence::{Evidence, Partner, RequirementResult, Tool, Verdict};
use crate::report::manifest;
use crate::timestamp::Timestamp;

pub(crate) const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// ppcert's certification predicate, version 1 (fields below; new fields may be added).
pub(crate) const PREDICATE_TYPE: &str = "https://ppcert.dev/certification/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Statement {
    #[serde(rename = "_type")]
    pub kind: String,
    pub subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    pub predicate: Predicate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Subject {
    pub name: String,
    pub digest: Digest,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Digest {
    pub sha256: String,
}

/// What the run was and how it ended, as computed again from its journal when signed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Predicate {
    pub partner: Partner,
    pub target: Target,
    pub scenario: Scenario,
    pub run: Run,
    pub verdict: Verdict,
    pub requirements: Vec<RequirementResult>,
    /// The ppcert that ran (from evidence.json, itself a subject).
    pub tool: Tool,
    pub journal: Digest,
    /// The signer's clock when it signed: a claim, not a proof.
    pub signed_at: Timestamp,
    /// The identifiers the provider issued and the certificate its server presented: what
    /// the provider matches against its own logs (read from the journal, see
    /// [`Issued::read`]). Absent from statements signed before ppcert recorded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued: Option<Issued>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Target {
    pub base_url: String,
    pub environment: crate::environment::Environment,
    /// The answers came from ppcert's sandbox, not the provider's staging.
    pub sandbox: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Scenario {
    pub name: String,
    pub source: String,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Run {
    pub id: String,
    pub started_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    pub complete: bool,
}

impl Predicate {
    /// The predicate of a bundle whose record `derived` was computed again from its journal.
    pub(crate) fn of(
        derived: &Evidence,
        tool: &Tool,
        journal_sha256: &str,
        signed_at: Timestamp,
    ) -> Self {
        let run = &derived.run;
        Predicate {
            partner: run.partner.clone(),
            target: Target {
                base_url: run.target.base_url.clone(),
                environment: run.target.environment,
                sandbox: run.target.sandbox,
            },
            scenario: Scenario {
                name: run.scenario.clone(),
                source: run.scenario_source.clone(),
                sha256: run.scenario_sha256.clone(),
            },
            run: Run {
                id: run.id.clone(),
                started_at: run.started_at,
                finished_at: run.finished_at,
                complete: run.complete,
            },
            verdict: derived.verdict,
            requirements: derived.requirements.clone(),
            tool: tool.clone(),
            journal: Digest {
                sha256: journal_sha256.to_string(),
            },
            signed_at,
            issued: None,
        }
    }
}

/// The subjects of a bundle: every file the manifest lists, and the manifest.
pub(crate) fn subjects(listed: &[(String, String)], manifest_sha256: &str) -> Vec<Subject> {
    let mut subjects: Vec<Subject> = listed
        .iter()
        .map(|(digest, name)| Subject {
            name: name.clone(),
            digest: Digest {
                sha256: digest.clone(),
            },
        })
        .chain(std::iter::once(Subject {
            name: manifest::FILE_NAME.to_string(),
            digest: Digest {
                sha256: manifest_sha256.to_string(),
            },
        }))
        .collect();
    subjects.sort_by(|a, b| a.name.cmp(&b.name));
    subjects
}

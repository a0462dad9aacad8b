//! The dossier's record (`dossier.json`) and its names: plain types, read and computed by the
//! modules beside this one.

use serde::{Deserialize, Serialize};

use crate::evidence::{Partner, RequirementResult, Tool, Verdict};
use crate::models::Operation;

/// The dossier's own record, beside its members and reports.
pub(crate) const FILE_NAME: &str = "dossier.json";
/// What `dossier.json` says it is, so no reader takes it for a run's `evidence.json`.
pub(crate) const SCHEMA: &str = "ppcert-dossier";
pub(crate) const SCHEMA_VERSION: u32 = 1;
/// A member bundle is kept as `member-<run id>-<journal digest>.tar.gz` (a `ppcert package`).
pub(crate) const MEMBER_PREFIX: &str = "member-";
pub(crate) const MEMBER_SUFFIX: &str = ".tar.gz";
/// The requirements a dossier is held to: the provider's validation batch.
pub(crate) const HELD_TO: &str = "certification";

/// Said in every report of a dossier whose members talked to ppcert's sandbox.
pub(crate) const SANDBOX_NOTICE: &str = "Every member of this dossier talked to ppcert's sandbox (its answers say so), not the provider's staging server: it is not certification evidence.";

/// `dossier.json`: computed from the members alone, so `verify` computes it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Dossier {
    pub schema: String,
    pub schema_version: u32,
    pub tool: Tool,
    pub partner: Partner,
    pub target: DossierTarget,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    pub verdict: Verdict,
    pub requirements: Vec<DossierRequirement>,
    pub members: Vec<Member>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DossierTarget {
    pub base_url: String,
    pub environment: crate::environment::Environment,
    /// The members' answers came from ppcert's sandbox.
    pub sandbox: bool,
}

/// One requirement across every member: `succeeded` counts distinct operations, `failed` and
/// `unconfirmed` add up the members' own counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DossierRequirement {
    #[serde(flatten)]
    pub counts: RequirementResult,
    /// Which members proved it, and by which exchanges.
    pub proven_by: Vec<Proof>,
}

/// What one member contributed to one requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Proof {
    /// The member's file in the dossier.
    pub member: String,
    pub run_id: String,
    pub counted: u32,
    /// The `seq` of each exchange counted, in the member's journal.
    pub exchanges: Vec<u64>,
}

/// One bundle in the dossier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Member {
    pub file: String,
    pub run_id: String,
    /// `run` or `proxy session`.
    pub kind: String,
    pub scenario: String,
    pub started_at: crate::timestamp::Timestamp,
    pub finished_at: Option<crate::timestamp::Timestamp>,
    pub complete: bool,
    /// The member's own verdict, computed again from its journal.
    pub verdict: Verdict,
    /// The SHA-256 of its journal: the same bundle added twice has the same.
    pub journal_sha256: String,
    /// The member carries an attestation.
    pub signed: bool,
    /// Operations it counted that no earlier member had.
    pub counted: u32,
    /// Successes it recorded that an earlier member had counted already.
    pub duplicates: u32,
}

impl Dossier {
    /// Reads `dossier.json`; `name` says where it came from in errors.
    pub(crate) fn parse(name: &str, text: &str) -> Result<Dossier, String> {
        let dossier: Dossier =
            serde_json::from_str(text).map_err(|e| format!("{name}:{}: {e}", e.line()))?;
        if dossier.schema != SCHEMA || dossier.schema_version != SCHEMA_VERSION {
            return Err(format!(
                "{name}: schema {} version {} is not a dossier this ppcert reads ({SCHEMA} {SCHEMA_VERSION})",
                dossier.schema, dossier.schema_version
            ));
        }
        Ok(dossier)
    }

    /// What the dossier still lacks: operation and how many more.
    pub(crate) fn missing(&self) -> Vec<(Operation, u32)> {
        self.requirements
            .iter()
            .map(|r| &r.counts)
            .filter(|r| r.succeeded < r.required)
            .filter_map(|r| Some((r.operation.operation()?, r.required - r.succeeded)))
            .collect()
    }
}

/// Whether `name` is a member package's file name.
pub(crate) fn is_member_file(name: &str) -> bool {
    name.starts_with(MEMBER_PREFIX) && name.ends_with(MEMBER_SUFFIX)
}

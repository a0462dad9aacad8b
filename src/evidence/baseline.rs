//! The evidence's `baseline` section (`run --baseline`, `proxy --baseline`): what changed
//! since the bundle named, as `ppcert diff` finds it. Stored, not re-derived: the baseline
//! bundle is not part of this one, and the manifest vouches for the stored findings.

use serde::{Deserialize, Serialize};

/// How one bundle compares with an earlier one: regressions first, then other changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Drift {
    /// The earlier bundle.
    pub base: BundleRef,
    /// The causes, each with the regressions that follow from it under `consequences`.
    pub regressions: Vec<Finding>,
    pub changes: Vec<Finding>,
    /// `--accept-drift`: the regressions were accepted, so they did not fail the run and this
    /// bundle may be the next baseline. Absent when there was nothing to accept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accepted: bool,
}

impl Drift {
    /// Whether anything regressed (accepted or not).
    pub(crate) fn regressed(&self) -> bool {
        !self.regressions.is_empty()
    }

    /// Whether a regression fails the run: one that was not accepted.
    pub(crate) fn fails(&self) -> bool {
        self.regressed() && !self.accepted
    }

    /// Every regression, causes and their consequences, counted.
    pub(crate) fn regression_count(&self) -> usize {
        (self.regressions.iter())
            .map(|f| 1 + f.consequences.len())
            .sum()
    }
}

/// Which bundle: as it was named on the command line, and the run it records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BundleRef {
    pub bundle: String,
    pub run_id: String,
    pub scenario: String,
    /// The verdict as `verdict` in its evidence.json: `passed`, `failed`, `incomplete`.
    pub verdict: String,
    /// `run` (a scenario ppcert drove) or `proxy` (the partner's own client's traffic).
    pub source: String,
}

/// One difference, in words and in fields a tool can branch on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Finding {
    pub kind: FindingKind,
    /// `verdict`, `ledger`, `warnings`, `webhooks`, or the operation (`update`, `quote in
    /// step update`, `claim (expected error)`).
    pub subject: String,
    /// The JSON path in the answer (`$.data.id`, arrays as `[*]`), when about a field.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub after: Option<String>,
    /// The finding in a sentence.
    pub message: String,
    /// On a cause: the regressions that follow from it (a requirement no longer met, an
    /// operation no longer sent, the verdict), listed under it rather than beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consequences: Vec<Finding>,
}

/// What kind of difference a finding is; regressions and changes use distinct kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FindingKind {
    // Regressions.
    VerdictWorse,
    RequirementNoLongerMet,
    SuccessNowError,
    StatusChanged,
    ReadFieldMissing,
    ReadFieldRetyped,
    ReadValueMissing,
    OperationGone,
    // Other changes.
    VerdictBetter,
    RequirementNowMet,
    RequirementChanged,
    OperationNew,
    FieldAdded,
    FieldRemoved,
    FieldRetyped,
    ErrorChanged,
    LatencyShift,
    WarningAdded,
    WarningGone,
    ClaimStatuses,
    Webhooks,
}

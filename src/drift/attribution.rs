//! Who changed: a `run` pair (ppcert's own fixed client) and a `proxy` pair (the partner's
//! client, through `ppcert proxy`) against the same staging. What the run pair sees changed,
//! the staging did (the run's client did not change); what only the proxy pair sees, the
//! partner's client did.

use std::fmt::Write;

use serde::Serialize;

use super::compare::Compared;
use crate::evidence::baseline::{Finding, FindingKind};

/// Which side changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Side {
    Neither,
    Staging,
    Client,
    Both,
}

impl Side {
    fn words(self) -> &'static str {
        match self {
            Side::Neither => "neither side changed",
            Side::Staging => "the staging changed (ppcert's own run sees it too)",
            Side::Client => {
                "the partner's client changed (only its traffic through the proxy shows it)"
            }
            Side::Both => "both changed: the staging, and the partner's client",
        }
    }
}

/// Both pairs, and each finding put on its side.
#[derive(Debug, Serialize)]
pub(crate) struct Attribution {
    pub changed: Side,
    /// Differences the run pair shows (with those the proxy pair shows too).
    pub staging: Vec<Finding>,
    /// Differences only the proxy pair shows.
    pub client: Vec<Finding>,
    pub run: Compared,
    pub proxy: Compared,
}

impl Attribution {
    pub(crate) fn regressed(&self) -> bool {
        self.run.drift.regressed() || self.proxy.drift.regressed()
    }
}

/// Where a difference is, whichever client saw it and whatever kind of finding it made:
/// the operation (steps are named by whoever sent them) and the field. A renamed field that
/// ppcert's run reads is `read_field_missing` in the run pair and `field_removed` in the
/// proxy pair (the proxy reads nothing): one change of the staging, not two. A finding about
/// no field (a status, the ledger, the verdict) is told apart by its kind as well.
fn identity(finding: &Finding) -> (Option<FindingKind>, &str, Option<&str>) {
    let operation = finding.subject.split(' ').next().unwrap_or_default();
    match finding.path.as_deref() {
        Some(path) => (None, operation, Some(path)),
        None => (Some(finding.kind), operation, None),
    }
}

pub(crate) fn attribute(run: Compared, proxy: Compared) -> Attribution {
    let all = |c: &Compared| -> Vec<Finding> {
        (c.drift.regressions.iter())
            .chain(&c.drift.changes)
            .cloned()
            .collect()
    };
    let staging = all(&run);
    // A consequence in the run pair vouches for the same consequence in the proxy pair.
    let seen: std::collections::BTreeSet<_> = (staging.iter())
        .flat_map(|f| std::iter::once(f).chain(&f.consequences))
        .map(identity)
        .collect();
    let client: Vec<Finding> = (all(&proxy).into_iter())
        .filter(|f| !seen.contains(&identity(f)))
        .collect();
    let changed = match (staging.is_empty(), client.is_empty()) {
        (true, true) => Side::Neither,
        (false, true) => Side::Staging,
        (true, false) => Side::Client,
        (false, false) => Side::Both,
    };
    Attribution {
        changed,
        staging,
        client,
        run,
        proxy,
    }
}

/// The attribution as text: the answer first, then each side's findings.
pub(crate) fn render(attribution: &Attribution) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", attribution.changed.words());
    let side = |out: &mut String, title: &str, items: &[Finding]| {
        if !items.is_empty() {
            let _ = writeln!(out, "{title} ({}):", items.len());
            for item in items {
                let _ = writeln!(out, "  - {}", item.message);
            }
        }
    };
    side(&mut out, "the staging", &attribution.staging);
    side(&mut out, "the partner's client", &attribution.client);
    for (name, pair) in [("run", &attribution.run), ("proxy", &attribution.proxy)] {
        let _ = writeln!(out, "\n{name} pair:");
        out.push_str(&super::text::render(&pair.drift, &pair.new));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::baseline::{BundleRef, Drift};

    fn pair(findings: &[(&str, &str)]) -> Compared {
        let bundle = BundleRef {
            bundle: "b".into(),
            run_id: "r".into(),
            scenario: "s".into(),
            verdict: "passed".into(),
            source: "run".into(),
        };
        let changes = (findings.iter())
            .map(|(subject, path)| Finding {
                kind: FindingKind::FieldRetyped,
                subject: subject.to_string(),
                path: Some(path.to_string()),
                before: None,
                after: None,
                message: format!("{subject} {path}"),
                consequences: Vec::new(),
            })
            .collect();
        Compared {
            drift: Drift {
                base: bundle.clone(),
                regressions: Vec::new(),
                changes,
                accepted: false,
            },
            new: bundle,
        }
    }

    #[test]
    fn what_both_see_is_the_staging_what_only_the_proxy_sees_the_client() {
        let both = attribute(
            pair(&[("quote", "$.a")]),
            pair(&[("quote in step x", "$.a")]),
        );
        assert_eq!(both.changed, Side::Staging);
        assert!(both.client.is_empty());
        let client = attribute(pair(&[]), pair(&[("update", "$.b")]));
        assert_eq!(client.changed, Side::Client);
        let mixed = attribute(pair(&[("quote", "$.a")]), pair(&[("update", "$.b")]));
        assert_eq!(mixed.changed, Side::Both);
        assert_eq!(attribute(pair(&[]), pair(&[])).changed, Side::Neither);
    }

    #[test]
    fn a_field_is_matched_by_where_it_is_not_by_the_kind_each_pair_found() {
        let mut run = pair(&[("quote", "$.data.priceDelta")]);
        run.drift.changes[0].kind = FindingKind::ReadFieldMissing;
        let mut proxy = pair(&[("quote", "$.data.priceDelta")]);
        proxy.drift.changes[0].kind = FindingKind::FieldRemoved;
        let found = attribute(run, proxy);
        assert_eq!(found.changed, Side::Staging, "{:?}", found.client);
    }
}

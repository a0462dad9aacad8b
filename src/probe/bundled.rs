//! A quote answered one entry per bundle: the probe lists the bundles, reads the one
//! `[partner] bundle` names (or, when none is named, the first, so the calls after it can be
//! tried) and proposes the setting; it never proposes `$.data[0]`, which picks whichever
//! bundle the staging lists first.

use super::{Answer, CallReport, Prober};
use crate::answer::bundles::{self, BundleError};

impl Prober {
    /// The bundles offered when several were and the config chose none: the config probe
    /// writes leaves `[partner] bundle` commented out, for the partner to choose.
    pub(crate) fn bundle_left_to_choose(&self) -> Option<&[String]> {
        self.bundles_offered
            .as_deref()
            .filter(|offered| offered.len() > 1 && self.endpoints.bundle().is_none())
    }

    /// The answer as its values are read: the chosen entry of a multi-bundle answer.
    pub(super) fn through_bundle(&mut self, call: &mut CallReport, answer: Answer) -> Answer {
        let Some((entries, _)) = bundles::entries(&answer.body) else {
            return answer;
        };
        if !answer.accepted() || entries.is_empty() {
            return answer;
        }
        let offered = bundles::names(entries);
        call.lines.push(format!(
            "the answer offers one quote per bundle: {}",
            offered.join(", ")
        ));
        let chosen = match bundles::choose(&answer.body, self.endpoints.bundle()) {
            Ok(chosen) => chosen,
            Err(error @ (BundleError::Ambiguous { .. } | BundleError::Missing { .. })) => {
                if self.bundles_offered.is_none() {
                    self.left.push(format!(
                        "{error} (one of: {}; the probe went on with `{}`)",
                        offered.join(", "),
                        offered[0]
                    ));
                }
                bundles::choose(&answer.body, Some(&offered[0]))
                    .ok()
                    .flatten()
            }
            Err(BundleError::Empty) => None,
        };
        self.bundles_offered = Some(offered);
        let Some(chosen) = chosen else {
            return answer;
        };
        call.lines.push(format!(
            "read bundle {} from {}",
            chosen.name.as_deref().unwrap_or("(unnamed)"),
            chosen.at
        ));
        Answer {
            body: chosen.view,
            ..answer
        }
    }
}

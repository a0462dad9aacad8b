//! Paths the probe learns: deletion by the quote's reference, and slashed paths for every
//! endpoint once the staging redirects a call to its own path with a trailing slash.

use std::collections::BTreeMap;

use super::Prober;
use super::prober::{Proven, compile};
use crate::dialect::Definitions;
use crate::endpoints::{CaptureSpec, EndpointError};
use crate::models::Operation;

impl Prober {
    /// Paths learned (deletion by reference) and, when the staging redirects to slashed
    /// paths, every operation's path as it is sent now.
    pub(super) fn learned_paths(&self) -> BTreeMap<Operation, Proven> {
        let mut paths = self.proven_paths.clone();
        if let Some(why) = &self.slashed {
            for op in Operation::ALL {
                if let Some(path) = self
                    .definitions
                    .get(op.as_str())
                    .and_then(|d| d.path.clone())
                {
                    let inferred_from = format!("proven: {why}");
                    let path = CaptureSpec::Path(path);
                    paths.insert(
                        op,
                        Proven {
                            path,
                            inferred_from,
                        },
                    );
                }
            }
        }
        paths
    }

    /// Puts `path` in force for `op` for the next calls; what was in force before comes back.
    pub(crate) fn try_path(
        &mut self,
        op: Operation,
        path: &str,
    ) -> Result<Definitions, EndpointError> {
        let before = self.definitions.clone();
        self.definitions
            .entry(op.as_str().to_string())
            .or_default()
            .path = Some(path.to_string());
        self.endpoints = compile(&self.definitions)?;
        Ok(before)
    }

    /// Keeps a path that worked, to be written with what proved it.
    pub(crate) fn keep_path(&mut self, op: Operation, before: Definitions, proof: String) {
        let path = self.definitions[op.as_str()]
            .path
            .clone()
            .unwrap_or_default();
        drop(before);
        self.proven_paths.insert(
            op,
            Proven {
                path: CaptureSpec::Path(path),
                inferred_from: format!("proven: {proof}"),
            },
        );
    }

    /// Puts back the definitions in force before [`Prober::try_path`].
    pub(crate) fn restore_path(&mut self, before: Definitions) -> Result<(), EndpointError> {
        self.definitions = before;
        self.endpoints = compile(&self.definitions)?;
        Ok(())
    }
}

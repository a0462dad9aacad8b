//! Which `captured.NAME` values each operation's templates read, and the check that a flow
//! captures each before the call that reads it: a template reading a value no earlier call
//! of its flow captures would fail mid-run, after some writes; it is refused before any.

use super::{Endpoints, capture::capture_key, header_key, template};
use crate::models::Operation;

/// A template reads a captured value no earlier call of its flow captures.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{template} reads `captured.{name}`, which no call before it in flow `{flow}` captures \
     (step {number}, `{step}`); capture it on an earlier call with \
     `[endpoints.OPERATION.capture] {name} = \"$.…\"` (or `{{ header = \"…\" }}`), or guard it \
     with `captured.{name} is defined`"
)]
pub(crate) struct CapturedTooEarly {
    /// `endpoints.update.headers.If-Match`.
    pub template: String,
    pub name: String,
    pub flow: String,
    /// The step (from 1) whose call reads it.
    pub number: usize,
    pub step: String,
}

/// One step of a flow as the check sees it: its name and the operations it sends, in order.
pub(crate) struct FlowStep {
    pub name: String,
    pub operations: Vec<Operation>,
}

impl Endpoints {
    /// Every (template key, NAME) pair where a template of `op` reads `captured.NAME`.
    pub(crate) fn captured_reads(&self, op: Operation) -> Vec<(String, String)> {
        let mut reads = Vec::new();
        let mut add = |key: String, names: Vec<String>| {
            reads.extend(names.into_iter().map(|name| (key.clone(), name)));
        };
        add(
            format!("endpoints.{op}.path"),
            template::captured_reads(&self.paths, op.as_str()),
        );
        for name in &self.endpoints[&op].headers {
            add(
                format!("endpoints.{op}.headers.{name}"),
                template::captured_reads(&self.headers, &header_key(op, name)),
            );
        }
        if self.has_body_template(op) {
            add(
                format!("endpoints.{op}.body"),
                template::captured_reads(&self.bodies, op.as_str()),
            );
        }
        for name in self.endpoints[&op].captures.keys() {
            let key = capture_key(op, name);
            add(key.clone(), template::captured_reads(&self.captures, &key));
        }
        reads
    }

    /// What the wait of `op` reads from `captured` (its own answer's captures count).
    fn wait_reads(&self, op: Operation) -> Vec<String> {
        let Some(wait) = self.wait(op) else {
            return Vec::new();
        };
        let source = format!("{{{{ {} }}}}", wait.until);
        template::captured_in(&source, wait.names(&self.captures))
    }

    /// Checks that every `captured.NAME` a call of the flow reads is captured by a call
    /// before it (built-in values included: an answer may carry them).
    pub(crate) fn check_flow(
        &self,
        flow: &str,
        steps: &[FlowStep],
    ) -> Result<(), CapturedTooEarly> {
        let mut captured: Vec<String> = Vec::new();
        for (index, step) in steps.iter().enumerate() {
            let refuse = |template: String, name: String| CapturedTooEarly {
                template,
                name,
                flow: flow.to_string(),
                number: index + 1,
                step: step.name.clone(),
            };
            for &op in &step.operations {
                for (key, name) in self.captured_reads(op) {
                    if !captured.contains(&name) {
                        return Err(refuse(key, name));
                    }
                }
                let own = self.may_capture(op);
                for name in self.wait_reads(op) {
                    if !captured.contains(&name) && !own.contains(&name) {
                        return Err(refuse(format!("endpoints.{op}.wait.until"), name));
                    }
                }
                captured.extend(own);
            }
        }
        Ok(())
    }
}

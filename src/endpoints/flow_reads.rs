//! Which `captured.NAME` values each operation's templates read, and the check that a flow
//! captures each before the call that reads it: a template reading a value no earlier call
//! of its flow captures would fail mid-run, after some writes; it is refused before any.

use std::collections::BTreeMap;

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
    /// Every (template key, NAME) pair where a template of `op` reads `captured.NAME`: found
    /// once when the endpoints compile, not on every call.
    pub(crate) fn captured_reads(&self, op: Operation) -> &[(String, String)] {
        self.reads.get(&op).map_or(&[], Vec::as_slice)
    }

    /// [`Endpoints::captured_reads`] of every operation, read from the templates.
    pub(super) fn find_captured_reads(&self) -> BTreeMap<Operation, Vec<(String, String)>> {
        Operation::ALL
            .iter()
            .map(|op| (*op, self.reads_of(*op)))
            .collect()
    }

    fn reads_of(&self, op: Operation) -> Vec<(String, String)> {
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
                    if !captured.contains(name) {
                        return Err(refuse(key.clone(), name.clone()));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoints::{CaptureSpec, EndpointOverride, HeaderCapture, WaitSpec};

    fn step(name: &str, operations: &[Operation]) -> FlowStep {
        FlowStep {
            name: name.into(),
            operations: operations.to_vec(),
        }
    }

    fn if_match(header: &str, wait_until: Option<&str>) -> Endpoints {
        let etag = CaptureSpec::Header(HeaderCapture {
            header: "ETag".into(),
            pattern: None,
        });
        let read = EndpointOverride {
            capture: BTreeMap::from([("etag".to_string(), etag)]),
            wait: wait_until.map(|until| WaitSpec {
                until: until.into(),
                every: "100ms".into(),
                timeout: "1s".into(),
            }),
            ..Default::default()
        };
        let update = EndpointOverride {
            headers: BTreeMap::from([("If-Match".to_string(), header.to_string())]),
            ..Default::default()
        };
        let overrides = BTreeMap::from([
            ("read_contracts".to_string(), read),
            ("update".to_string(), update),
        ]);
        crate::dialect::spec_with(&overrides).unwrap()
    }

    #[test]
    fn a_value_must_be_captured_by_an_earlier_call_of_the_flow() {
        use Operation::*;
        let endpoints = if_match("{{ captured.etag }}", None);
        let (quote, subscribe) = (step("quote", &[Quote]), step("subscribe", &[Subscription]));
        let (read, update) = (
            step("read_contracts", &[ReadContracts]),
            step("update", &[Quote, Update]),
        );
        let error = endpoints
            .check_flow("lifecycle", &[quote, subscribe, update, read])
            .unwrap_err();
        assert_eq!(error.template, "endpoints.update.headers.If-Match");
        assert_eq!((error.name.as_str(), error.number), ("etag", 3));
        assert!(error.to_string().contains("flow `lifecycle`"), "{error}");
        let steps = [
            step("quote", &[Quote]),
            step("subscribe", &[Subscription]),
            step("read_contracts", &[ReadContracts]),
            step("update", &[Quote, Update]),
            step("update", &[Quote, Update]),
        ];
        endpoints.check_flow("lifecycle", &steps).unwrap();
    }

    #[test]
    fn a_guarded_read_and_a_wait_on_its_own_answer_need_nothing_earlier() {
        use Operation::*;
        let guarded = if_match("{{ captured.etag | default(\"*\") }}", None);
        let steps = [step("update", &[Quote, Update])];
        guarded.check_flow("f", &steps).unwrap();
        let waiting = if_match(
            "*",
            Some("captured.etag is defined and captured.contract_id"),
        );
        let steps = [step("read_contracts", &[ReadContracts])];
        waiting.check_flow("f", &steps).unwrap();
        // A built-in value some earlier call may give counts as captured.
        let by_id = if_match("{{ captured.id }}", None);
        by_id
            .check_flow("f", &[step("update", &[Quote, Update])])
            .unwrap();
        let error = by_id
            .check_flow(
                "f",
                &[
                    step("subscribe", &[Subscription]),
                    step("update", &[Update]),
                ],
            )
            .unwrap_err();
        assert_eq!(error.name, "id");
    }
}

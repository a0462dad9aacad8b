//! Which `captured.NAME` values each operation's templates read, and the check that a flow
//! captures each before the call that reads it: a template reading a value no earlier call
//! of its flow captures would fail mid-run, after some writes; it is refused before any.

use std::collections::BTreeMap;

use minijinja::Environment;

use super::template;
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

/// What one operation's templates read of `captured`, and what its answer may give it.
#[derive(Debug, Clone, Default)]
pub(super) struct OpReads {
    /// (template key, NAME) for every unguarded `captured.NAME` of a path, header, body or
    /// capture template.
    pub templates: Vec<(String, String)>,
    /// The names its wait's condition reads (its own answer's values count for those).
    pub wait: Vec<String>,
    /// The built-in values and the user's captures of its answer.
    pub gives: Vec<String>,
}

/// Every operation's [`OpReads`], found once when the endpoints compile.
#[derive(Debug, Clone, Default)]
pub(super) struct FlowReads(pub BTreeMap<Operation, OpReads>);

impl FlowReads {
    pub(super) fn templates(&self, op: Operation) -> &[(String, String)] {
        self.0
            .get(&op)
            .map_or(&[], |reads| reads.templates.as_slice())
    }

    /// Checks that every `captured.NAME` a call of the flow reads is captured by a call
    /// before it (built-in values included: an answer may carry them).
    pub(super) fn check_flow(
        &self,
        flow: &str,
        steps: &[FlowStep],
    ) -> Result<(), CapturedTooEarly> {
        let empty = OpReads::default();
        let mut captured: Vec<&str> = Vec::new();
        for (index, step) in steps.iter().enumerate() {
            let refuse = |template: String, name: &str| CapturedTooEarly {
                template,
                name: name.to_string(),
                flow: flow.to_string(),
                number: index + 1,
                step: step.name.clone(),
            };
            for op in &step.operations {
                let reads = self.0.get(op).unwrap_or(&empty);
                for (key, name) in &reads.templates {
                    if !captured.contains(&name.as_str()) {
                        return Err(refuse(key.clone(), name));
                    }
                }
                for name in &reads.wait {
                    if !captured.contains(&name.as_str()) && !reads.gives.contains(name) {
                        return Err(refuse(format!("endpoints.{op}.wait.until"), name));
                    }
                }
                captured.extend(reads.gives.iter().map(String::as_str));
            }
        }
        Ok(())
    }
}

/// Adds the `captured.NAME` values template `name` of `env` reads, under `key`.
pub(super) fn add_reads(
    out: &mut Vec<(String, String)>,
    key: String,
    env: &Environment<'static>,
    name: &str,
) {
    for read in template::captured_reads(env, name) {
        out.push((key.clone(), read));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoints::wait::WaitSpec;
    use crate::endpoints::{CaptureSpec, EndpointOverride, Endpoints, HeaderCapture};

    fn step(name: &str, operations: &[Operation]) -> FlowStep {
        FlowStep {
            name: name.into(),
            operations: operations.to_vec(),
        }
    }

    /// The contracts read captures `etag` (and may wait on `wait_until`); the update sends
    /// `header` as its If-Match.
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
        let steps = [
            step("quote", &[Quote]),
            step("subscribe", &[Subscription]),
            step("update", &[Quote, Update]),
            step("read_contracts", &[ReadContracts]),
        ];
        let error = endpoints.check_flow("lifecycle", &steps).unwrap_err();
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
        guarded
            .check_flow("f", &[step("update", &[Quote, Update])])
            .unwrap();
        let waiting = if_match(
            "*",
            Some("captured.etag is defined and captured.contract_id"),
        );
        waiting
            .check_flow("f", &[step("read_contracts", &[ReadContracts])])
            .unwrap();
        // A built-in value an earlier call may give counts as captured.
        let by_id = if_match("{{ captured.id }}", None);
        by_id
            .check_flow("f", &[step("update", &[Quote, Update])])
            .unwrap();
        let steps = [
            step("subscribe", &[Subscription]),
            step("update", &[Update]),
        ];
        assert_eq!(by_id.check_flow("f", &steps).unwrap_err().name, "id");
    }
}

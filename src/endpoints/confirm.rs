//! `[endpoints.WRITE.confirm]`: after a write's success answer, read until its outcome shows.
//! `read` names the read (an endpoint, or a path/URL template such as
//! `"{{ captured.location }}"`), `until` is a condition over the confirming answer's context
//! (its captures included), `every` and `timeout` bound the reads, and `capture` reads values
//! from the confirming answer. Every key is optional: a `202 Accepted` is followed to its
//! `Location` by default, and the claim's built-in reading keeps its own read and condition.

use std::collections::BTreeMap;
use std::time::Duration;

use minijinja::Environment;
use serde::{Deserialize, Serialize};

use super::capture::{self, CaptureSpec};
pub(crate) use super::error::ConfirmError;
use super::wait::{Wait, WaitSpec, duration};
use crate::bounds;
use crate::models::Operation;

/// Between two confirmation reads when `every` is not set.
pub(crate) const DEFAULT_EVERY: Duration = Duration::from_millis(500);
/// How long a write's outcome may take to show when `timeout` is not set.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// A confirmation as `ppcert.toml` spells it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfirmSpec {
    /// An endpoint name (`read_contracts`), or a path or URL template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    /// A template expression over the confirming answer's context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Between reads (`500ms`, `1s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// How long the outcome may take to show before the step fails (`60s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// Values read from the confirming answer, kept as `captured.NAME`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, CaptureSpec>,
}

/// What a confirmation reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ConfirmRead {
    /// A read endpoint of the API (`read_contracts`), with its own path and captures.
    Endpoint(Operation),
    /// A path or absolute URL, rendered from a template (its key in the confirm environment
    /// is [`read_key`]).
    Template,
}

/// A checked confirmation.
#[derive(Debug, Clone)]
pub(crate) struct Confirm {
    pub read: Option<ConfirmRead>,
    /// The condition, as a wait over the confirming answer.
    pub until: Option<Wait>,
    pub every: Duration,
    pub timeout: Duration,
    pub(super) captures: BTreeMap<String, capture::Compiled>,
}

impl Confirm {
    /// Whether the table says how to confirm (a read or a condition), rather than only bounds.
    pub(crate) fn reads(&self) -> bool {
        self.read.is_some() || self.until.is_some()
    }
}

/// The key of a confirmation's read template in the confirm environment.
pub(crate) fn read_key(op: Operation) -> String {
    format!("endpoints.{op}.confirm.read")
}

impl ConfirmSpec {
    /// Checks the table of write `op`; its templates go into `env` (the confirm environment,
    /// which never percent-encodes: a read is often a whole URL).
    pub(super) fn check(
        &self,
        op: Operation,
        env: &mut Environment<'static>,
    ) -> Result<Confirm, ConfirmError> {
        let fail = |key: &str, reason: String| ConfirmError {
            key: key.to_string(),
            reason,
        };
        if !op.is_write() {
            return Err(fail(
                "read",
                format!("{op} is a read: only a write is confirmed (use [endpoints.{op}.wait])"),
            ));
        }
        let of = |key: &'static str, text: &Option<String>, default, range| match text {
            Some(text) => duration(key, text, range).map_err(|e| fail(key, e.reason)),
            None => Ok(default),
        };
        let every = of("every", &self.every, DEFAULT_EVERY, &bounds::WAIT_EVERY_MS)?;
        let timeout = of(
            "timeout",
            &self.timeout,
            DEFAULT_TIMEOUT,
            &bounds::WAIT_TIMEOUT_MS,
        )?;
        if every > timeout {
            let reason = format!("{every:?} is longer than timeout {timeout:?}");
            return Err(fail("every", reason));
        }
        let until = match &self.until {
            Some(until) => {
                let spec = WaitSpec {
                    until: until.clone(),
                    every: format!("{}ms", every.as_millis()),
                    timeout: format!("{}ms", timeout.as_millis()),
                };
                Some(spec.check(env).map_err(|e| fail(e.key, e.reason))?)
            }
            None => None,
        };
        let read = match self.read.as_deref().map(str::trim) {
            None => None,
            Some("") => return Err(fail("read", "empty: name a read endpoint or a path".into())),
            Some(name) => Some(read_of(op, name, env).map_err(|reason| fail("read", reason))?),
        };
        let mut captures = BTreeMap::new();
        for (name, spec) in &self.capture {
            let compiled = capture::compile(env, op, name, spec)
                .map_err(|e| fail(&format!("capture.{name}"), e.to_string()))?;
            captures.insert(name.clone(), compiled);
        }
        Ok(Confirm {
            read,
            until,
            every,
            timeout,
            captures,
        })
    }
}

/// An endpoint name, which must be a read, or a path/URL template.
fn read_of(
    op: Operation,
    name: &str,
    env: &mut Environment<'static>,
) -> Result<ConfirmRead, String> {
    if let Some(read) = Operation::parse(name) {
        return match read.is_write() {
            false => Ok(ConfirmRead::Endpoint(read)),
            true => Err(format!(
                "{read} is a write: a confirmation only reads (read_contracts, or a path)"
            )),
        };
    }
    let templated = name.starts_with("{{");
    let url = name.starts_with("http://") || name.starts_with("https://");
    if !(name.starts_with('/') || templated || url) {
        return Err(format!(
            "`{name}` is neither a read endpoint (read_contracts) nor a path (/…), a URL or a \
             template (\"{{{{ captured.location }}}}\")"
        ));
    }
    env.add_template_owned(read_key(op), name.to_string())
        .map_err(|e| format!("template: {e}"))?;
    Ok(ConfirmRead::Template)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(op: Operation, spec: ConfirmSpec) -> Result<Confirm, ConfirmError> {
        spec.check(op, &mut super::super::template::environment(false))
    }

    #[test]
    fn every_key_is_optional_and_bounds_default() {
        let confirm = check(Operation::Claim, ConfirmSpec::default()).unwrap();
        assert_eq!(
            (confirm.every, confirm.timeout),
            (DEFAULT_EVERY, DEFAULT_TIMEOUT)
        );
        assert!(!confirm.reads());
        let spec = ConfirmSpec {
            timeout: Some("30s".into()),
            ..Default::default()
        };
        let confirm = check(Operation::Claim, spec).unwrap();
        assert_eq!(confirm.timeout, Duration::from_secs(30));
    }

    #[test]
    fn a_read_is_a_read_endpoint_or_a_path_and_only_writes_are_confirmed() {
        let read = |name: &str| ConfirmSpec {
            read: Some(name.into()),
            ..Default::default()
        };
        let endpoint = check(Operation::Subscription, read("read_contracts")).unwrap();
        assert_eq!(
            endpoint.read,
            Some(ConfirmRead::Endpoint(Operation::ReadContracts))
        );
        let template = check(Operation::Subscription, read("{{ captured.location }}")).unwrap();
        assert_eq!(template.read, Some(ConfirmRead::Template));
        let write = check(Operation::Subscription, read("claim")).unwrap_err();
        assert_eq!(write.key, "read");
        assert!(write.reason.contains("claim is a write"), "{write}");
        let neither = check(Operation::Subscription, read("operations")).unwrap_err();
        assert!(neither.reason.contains("neither"), "{neither}");
        let on_read = check(Operation::ReadContracts, ConfirmSpec::default()).unwrap_err();
        assert!(
            on_read.to_string().contains("only a write is confirmed"),
            "{on_read}"
        );
        let slow = ConfirmSpec {
            every: Some("2s".into()),
            timeout: Some("1s".into()),
            ..Default::default()
        };
        assert_eq!(check(Operation::Claim, slow).unwrap_err().key, "every");
    }
}

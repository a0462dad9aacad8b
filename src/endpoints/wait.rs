//! `[endpoints.NAME.wait]`: repeat a request until a condition over the answer holds. The
//! condition is a minijinja expression over the call's context after each answer (its
//! `captured` values included); `every` and `timeout` are durations such as "500ms" or "20s",
//! bounded by `bounds::WAIT_EVERY_MS` and `bounds::WAIT_TIMEOUT_MS`.

use std::time::Duration;

use minijinja::{Environment, Value as Context};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::wait_error::ConditionError;
use crate::bounds;

/// A wait as `ppcert.toml` spells it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitSpec {
    /// A template expression, e.g. `captured.contract_id is defined`.
    pub until: String,
    /// Between polls (a `Retry-After` the answer carries is honoured when longer).
    pub every: String,
    /// How long the condition may take before the step fails.
    pub timeout: String,
}

/// A checked wait: its durations parsed and its expression compiled once.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Wait {
    pub until: String,
    pub every: Duration,
    pub timeout: Duration,
}

/// What is wrong with a wait: the key (`until`, `every`, `timeout`) and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("wait.{key}: {reason}")]
pub(crate) struct WaitError {
    pub key: &'static str,
    pub reason: String,
}

impl WaitSpec {
    pub(super) fn check(&self, env: &Environment<'static>) -> Result<Wait, WaitError> {
        let every = duration("every", &self.every, &bounds::WAIT_EVERY_MS)?;
        let timeout = duration("timeout", &self.timeout, &bounds::WAIT_TIMEOUT_MS)?;
        if every > timeout {
            return Err(WaitError {
                key: "every",
                reason: format!(
                    "{} is longer than timeout {}: the wait could never poll twice",
                    self.every, self.timeout
                ),
            });
        }
        if self.until.trim().is_empty() {
            return Err(WaitError {
                key: "until",
                reason: "empty: say what must hold, e.g. \"captured.contract_id is defined\""
                    .into(),
            });
        }
        env.compile_expression(&self.until)
            .map_err(|error| WaitError {
                key: "until",
                reason: format!("`{}` is not an expression: {error}", self.until),
            })?;
        Ok(Wait {
            until: self.until.clone(),
            every,
            timeout,
        })
    }
}

impl Wait {
    /// Whether the condition holds over `context`; an expression that cannot be evaluated
    /// (an undefined value used as a number, say) is an error naming the expression.
    pub(crate) fn holds(
        &self,
        env: &Environment<'static>,
        context: &Value,
    ) -> Result<bool, ConditionError> {
        let unevaluated = |error| ConditionError::Unevaluated {
            key: "wait.until".into(),
            expression: self.until.clone(),
            error,
        };
        let expression = (env.compile_expression(&self.until)).map_err(unevaluated)?;
        expression
            .eval(Context::from(minijinja::value::Serde(context)))
            .map(|value| value.is_true())
            .map_err(unevaluated)
    }

    /// The variables and attributes the condition names, as written (`captured.etag`).
    pub(crate) fn names(&self, env: &Environment<'static>) -> Vec<String> {
        env.compile_expression(&self.until)
            .map(|e| e.undeclared_variables(true).into_iter().collect())
            .unwrap_or_default()
    }

    /// The `captured.NAME` values the condition reads unguarded.
    pub(super) fn reads(&self, env: &Environment<'static>) -> Vec<String> {
        super::template::captured_in(&self.source(), self.names(env))
    }

    /// The condition as a template's source, for the checks that read templates.
    fn source(&self) -> String {
        format!("{{{{ {} }}}}", self.until)
    }

    /// Before a run: the condition names only what the call's `context` holds, and evaluates.
    pub(super) fn rehearse(
        &self,
        env: &Environment<'static>,
        op: crate::models::Operation,
        context: &Value,
    ) -> Result<(), ConditionError> {
        for name in self.names(env) {
            if !super::template::names_resolve(&self.source(), &name, context) {
                return Err(ConditionError::NotInContext { name, op });
            }
        }
        self.holds(env, context).map(|_| ())
    }
}

/// "500ms", "2s", "1m": a whole number and a unit, within `range` (milliseconds).
pub(crate) fn duration(
    key: &'static str,
    text: &str,
    range: &std::ops::RangeInclusive<u64>,
) -> Result<Duration, WaitError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit_ms = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        _ => 0,
    };
    let fail = |reason: String| WaitError { key, reason };
    let ms = match number.parse::<u64>() {
        Ok(n) if unit_ms > 0 => n.saturating_mul(unit_ms),
        _ => {
            return Err(fail(format!(
                "`{text}` is not a duration: write a whole number and ms, s or m (\"500ms\", \"20s\")"
            )));
        }
    };
    bounds::check(&format!("wait.{key}"), ms, range).map_err(|e| {
        fail(format!(
            "{text} ({ms} ms) is out of bounds ({} to {} ms)",
            e.start, e.end
        ))
    })?;
    Ok(Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(until: &str, every: &str, timeout: &str) -> WaitSpec {
        WaitSpec {
            until: until.into(),
            every: every.into(),
            timeout: timeout.into(),
        }
    }

    #[test]
    fn durations_and_expressions_are_checked_naming_the_key() {
        let env = super::super::template::environment(false);
        let wait = spec("captured.x is defined", "500ms", "20s")
            .check(&env)
            .unwrap();
        assert_eq!(wait.every, Duration::from_millis(500));
        assert_eq!(wait.timeout, Duration::from_secs(20));
        let timed = |every, timeout| spec("captured.x is defined", every, timeout);
        for (bad, key, words) in [
            (timed("soon", "20s"), "every", "not a duration"),
            (timed("10ms", "20s"), "every", "out of bounds"),
            (timed("1s", "2h"), "timeout", "not a duration"),
            (timed("1s", "11m"), "timeout", "out of bounds"),
            (timed("30s", "20s"), "every", "longer than timeout"),
            (
                spec("captured.x is", "1s", "20s"),
                "until",
                "not an expression",
            ),
            (spec(" ", "1s", "20s"), "until", "empty"),
        ] {
            let error = bad.check(&env).unwrap_err();
            assert_eq!(error.key, key, "{error}");
            assert!(error.to_string().contains(words), "{error}");
        }
    }

    #[test]
    fn a_condition_is_evaluated_over_the_context() {
        let env = super::super::template::environment(false);
        let wait = spec("captured.etag is defined", "1s", "2s")
            .check(&env)
            .unwrap();
        let absent = serde_json::json!({"captured": {}});
        let present = serde_json::json!({"captured": {"etag": "\"v1\""}});
        assert!(!wait.holds(&env, &absent).unwrap());
        assert!(wait.holds(&env, &present).unwrap());
        assert_eq!(wait.names(&env), vec!["captured.etag".to_string()]);
    }

    #[test]
    fn a_condition_that_cannot_be_evaluated_names_its_expression() {
        let env = super::super::template::environment(false);
        let wait = spec("captured.count > 2", "1s", "2s").check(&env).unwrap();
        let error = wait
            .holds(&env, &serde_json::json!({"captured": {}}))
            .unwrap_err();
        assert!(
            matches!(&error, ConditionError::Unevaluated { key, expression, .. }
                if key == "wait.until" && expression == "captured.count > 2"),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .starts_with("wait.until `captured.count > 2`: "),
            "{error}"
        );
        let confirm = error.under("endpoints.claim.confirm.until".into());
        assert!(
            confirm
                .to_string()
                .starts_with("endpoints.claim.confirm.until `captured.count > 2`: "),
            "{confirm}"
        );
        let op = crate::models::Operation::ReadContracts;
        let context = serde_json::json!({"captured": {}});
        let typo = spec("captured.etag is defined and booking.numbr", "1s", "2s")
            .check(&env)
            .unwrap();
        let error = typo.rehearse(&env, op, &context).unwrap_err();
        assert!(
            matches!(&error, ConditionError::NotInContext { name, .. } if name == "booking.numbr"),
            "{error:?}"
        );
    }
}

//! A fault plan (`ppcert proxy --faults PLAN`): `standard`, or a TOML file of `[[faults]]`,
//! each naming the operation, the kind and which of its calls (`nth` or `every`). Read once
//! before the proxy listens; a mistake names the file, the line and the field.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::models::Operation;
use crate::record::fault::{FaultKind, FaultRule, Which};
use crate::scenario::{FileError, line_of, toml_error};

/// The name of the built-in plan.
pub(crate) const STANDARD: &str = "standard";

/// The standard plan: what any correct client passes within the certification batch. Its
/// rules, in the order they are documented (docs/error-handling.md).
pub(crate) fn standard() -> Vec<FaultRule> {
    let rule = |operation, kind, nth| FaultRule {
        operation,
        kind,
        which: Which::Nth(nth),
    };
    vec![
        rule(
            Operation::Quote,
            FaultKind::Status {
                status: 429,
                retry_after_ms: Some(1_000),
            },
            2,
        ),
        rule(
            Operation::Subscription,
            FaultKind::Status {
                status: 503,
                retry_after_ms: None,
            },
            1,
        ),
        rule(Operation::Subscription, FaultKind::LostAnswer, 3),
        rule(
            Operation::Claim,
            FaultKind::Status {
                status: 503,
                retry_after_ms: None,
            },
            1,
        ),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    faults: Vec<RawFault>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFault {
    operation: Spanned<String>,
    kind: Spanned<String>,
    nth: Option<Spanned<i64>>,
    every: Option<Spanned<i64>>,
    status: Option<Spanned<i64>>,
    retry_after: Option<Spanned<String>>,
    #[serde(rename = "for")]
    hold_for: Option<Spanned<String>>,
}

/// The plan `PLAN` names: `standard`, or the file at that path.
pub(crate) fn load(plan: &str) -> Result<Vec<FaultRule>, FileError> {
    if plan == STANDARD {
        return Ok(standard());
    }
    let text = std::fs::read_to_string(plan).map_err(|e| FileError {
        file: plan.to_string(),
        line: None,
        message: format!(
            "cannot read the fault plan: {e} (PLAN is `{STANDARD}` or a TOML file of [[faults]])"
        ),
    })?;
    parse(plan, &text)
}

/// Reads a plan's text; `file` names it in errors.
pub(crate) fn parse(file: &str, text: &str) -> Result<Vec<FaultRule>, FileError> {
    let parsed: PlanFile = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
    if parsed.faults.is_empty() {
        return Err(FileError {
            file: file.into(),
            line: None,
            message: "no [[faults]]: a plan names at least one fault".into(),
        });
    }
    parsed
        .faults
        .into_iter()
        .map(|raw| rule(raw, file, text))
        .collect()
}

fn rule(raw: RawFault, file: &str, text: &str) -> Result<FaultRule, FileError> {
    let error = |at: std::ops::Range<usize>, message: String| FileError {
        file: file.into(),
        line: Some(line_of(text, at.start)),
        message,
    };
    let operation = Operation::parse(raw.operation.get_ref()).ok_or_else(|| {
        let names: Vec<&str> = Operation::ALL.iter().map(|op| op.as_str()).collect();
        error(
            raw.operation.span(),
            format!(
                "operation: `{}` is not an operation ({})",
                raw.operation.get_ref(),
                names.join(", ")
            ),
        )
    })?;
    let which = match (&raw.nth, &raw.every) {
        (Some(n), None) => Which::Nth(positive(n, "nth", &error)?),
        (None, Some(n)) => Which::Every(positive(n, "every", &error)?),
        (Some(_), Some(every)) => {
            return Err(error(
                every.span(),
                "every: give nth (one call) or every (each Nth call), not both".into(),
            ));
        }
        (None, None) => {
            return Err(error(
                raw.kind.span(),
                "nth: missing: say which call of the operation (nth = 1) or every = N".into(),
            ));
        }
    };
    let kind = kind(&raw, &error)?;
    Ok(FaultRule {
        operation,
        kind,
        which,
    })
}

type ErrorAt<'a> = dyn Fn(std::ops::Range<usize>, String) -> FileError + 'a;

fn positive(value: &Spanned<i64>, key: &str, error: &ErrorAt<'_>) -> Result<u32, FileError> {
    u32::try_from(*value.get_ref())
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            error(
                value.span(),
                format!(
                    "{key}: {} is not a call number (1 or more)",
                    value.get_ref()
                ),
            )
        })
}

/// The kind and the keys it takes; a key another kind takes is refused, naming it.
fn kind(raw: &RawFault, error: &ErrorAt<'_>) -> Result<FaultKind, FileError> {
    let refuse = |key: &str, span: std::ops::Range<usize>, kind: &str| {
        Err(error(
            span,
            format!("{key}: not a key of kind = \"{kind}\""),
        ))
    };
    let name = raw.kind.get_ref().as_str();
    if name != "status" {
        if let Some(status) = &raw.status {
            return refuse("status", status.span(), name);
        }
        if let Some(after) = &raw.retry_after {
            return refuse("retry_after", after.span(), name);
        }
    }
    if name != "delay"
        && let Some(hold) = &raw.hold_for
    {
        return refuse("for", hold.span(), name);
    }
    match name {
        "status" => status(raw, error),
        "lost_answer" => Ok(FaultKind::LostAnswer),
        "delay" => {
            let Some(hold) = &raw.hold_for else {
                return Err(error(
                    raw.kind.span(),
                    "for: missing: kind = \"delay\" holds the answer for = \"35s\"".into(),
                ));
            };
            Ok(FaultKind::Delay {
                for_ms: duration(hold, "for", error)?.as_millis() as u64,
            })
        }
        "duplicate_webhook" => {
            if !matches!(raw.operation.get_ref().as_str(), "subscription" | "claim") {
                return Err(error(
                    raw.operation.span(),
                    "operation: kind = \"duplicate_webhook\" duplicates the webhook of \"subscription\" (contract.created) or \"claim\" (claim.updated)".into(),
                ));
            }
            Ok(FaultKind::DuplicateWebhook)
        }
        other => Err(error(
            raw.kind.span(),
            format!(
                "kind: `{other}` is not a fault kind (status, lost_answer, delay, duplicate_webhook)"
            ),
        )),
    }
}

/// `kind = "status"`: 429 or 503, and its `Retry-After`.
fn status(raw: &RawFault, error: &ErrorAt<'_>) -> Result<FaultKind, FileError> {
    let Some(status) = &raw.status else {
        return Err(error(
            raw.kind.span(),
            "status: missing: kind = \"status\" answers status = 429 or 503".into(),
        ));
    };
    if !matches!(status.get_ref(), 429 | 503) {
        return Err(error(
            status.span(),
            format!("status: {} is not 429 or 503", status.get_ref()),
        ));
    }
    let retry_after_ms = match &raw.retry_after {
        Some(after) => Some(duration(after, "retry_after", error)?.as_millis() as u64),
        None => None,
    };
    Ok(FaultKind::Status {
        status: *status.get_ref() as u16,
        retry_after_ms,
    })
}

/// "500ms", "2s", "1m", up to 10 minutes: read as a wait's durations are.
fn duration(
    value: &Spanned<String>,
    key: &'static str,
    error: &ErrorAt<'_>,
) -> Result<Duration, FileError> {
    crate::endpoints::duration(key, value.get_ref(), &(0..=600_000))
        .map_err(|e| error(value.span(), format!("{key}: {}", e.reason)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        parse("faults.toml", text).unwrap_err().to_string()
    }

    #[test]
    fn a_plan_reads_and_its_mistakes_name_the_line_and_the_field() {
        let plan = parse(
            "faults.toml",
            "[[faults]]\noperation = \"quote\"\nkind = \"status\"\nstatus = 429\nretry_after = \"2s\"\nnth = 1\n\n[[faults]]\noperation = \"subscription\"\nkind = \"delay\"\nfor = \"35s\"\nevery = 3\n",
        )
        .unwrap();
        assert_eq!(plan.len(), 2);
        assert_eq!(plan[1].which, Which::Every(3));
        assert_eq!(plan[1].kind, FaultKind::Delay { for_ms: 35_000 });
        assert_eq!(
            error("[[faults]]\noperation = \"quote\"\nkind = \"status\"\nstatus = 500\nnth = 1\n"),
            "faults.toml:4: status: 500 is not 429 or 503"
        );
        assert_eq!(
            error("[[faults]]\noperation = \"quotes\"\nkind = \"lost_answer\"\nnth = 1\n"),
            "faults.toml:2: operation: `quotes` is not an operation (quote, subscription, update, quote_deletion, claim, read_contracts, flight_cancellation)"
                .replace(
                    "(quote, subscription, update, quote_deletion, claim, read_contracts, flight_cancellation)",
                    &format!("({})", Operation::ALL.iter().map(|o| o.as_str()).collect::<Vec<_>>().join(", "))
                )
        );
        assert_eq!(
            error("[[faults]]\noperation = \"quote\"\nkind = \"lost_answer\"\nnth = 0\n"),
            "faults.toml:4: nth: 0 is not a call number (1 or more)"
        );
        assert_eq!(
            error("[[faults]]\noperation = \"quote\"\nkind = \"delay\"\nfor = \"soon\"\nnth = 1\n"),
            "faults.toml:4: for: `soon` is not a duration: write a whole number and ms, s or m (\"500ms\", \"20s\")"
        );
        assert_eq!(
            error(
                "[[faults]]\noperation = \"quote\"\nkind = \"lost_answer\"\nstatus = 429\nnth = 1\n"
            ),
            "faults.toml:4: status: not a key of kind = \"lost_answer\""
        );
        assert!(
            error("[[faults]]\noperation = \"quote\"\nkind = \"lost_answer\"\nwhen = 1\n")
                .starts_with("faults.toml:4: column 1: unknown field `when`")
        );
        assert!(
            error("[[faults]]\noperation = \"quote\"\nkind = \"lost_answer\"\n")
                .starts_with("faults.toml:3: nth: missing")
        );
    }

    /// `duplicate_webhook` reads for the two operations the staging sends a webhook after,
    /// and each mistake names the file, the line and the field.
    #[test]
    fn a_duplicate_webhook_fault_reads_and_its_mistakes_are_named() {
        let plan = parse(
            "hooks.toml",
            "[[faults]]\noperation = \"subscription\"\nkind = \"duplicate_webhook\"\nnth = 2\n\n[[faults]]\noperation = \"claim\"\nkind = \"duplicate_webhook\"\nevery = 3\n",
        )
        .unwrap();
        let read: Vec<_> = plan
            .iter()
            .map(|r| (r.operation, &r.kind, r.which))
            .collect();
        assert_eq!(
            read,
            [
                (
                    Operation::Subscription,
                    &FaultKind::DuplicateWebhook,
                    Which::Nth(2)
                ),
                (
                    Operation::Claim,
                    &FaultKind::DuplicateWebhook,
                    Which::Every(3)
                ),
            ]
        );
        let hooks = |text: &str| parse("hooks.toml", text).unwrap_err().to_string();
        assert_eq!(
            hooks("[[faults]]\nkind = \"duplicate_webhook\"\noperation = \"quote\"\nnth = 1\n"),
            "hooks.toml:3: operation: kind = \"duplicate_webhook\" duplicates the webhook of \"subscription\" (contract.created) or \"claim\" (claim.updated)"
        );
        assert_eq!(
            hooks(
                "[[faults]]\noperation = \"claim\"\nkind = \"duplicate_webhook\"\nnth = 1\nstatus = 503\n"
            ),
            "hooks.toml:5: status: not a key of kind = \"duplicate_webhook\""
        );
        assert_eq!(
            hooks(
                "[[faults]]\noperation = \"claim\"\nkind = \"duplicate_webhook\"\nfor = \"2s\"\nnth = 1\n"
            ),
            "hooks.toml:4: for: not a key of kind = \"duplicate_webhook\""
        );
        assert_eq!(
            hooks("[[faults]]\noperation = \"claim\"\nkind = \"duplicate_webhook\"\nevery = -1\n"),
            "hooks.toml:4: every: -1 is not a call number (1 or more)"
        );
        assert!(
            hooks(
                "[[faults]]\noperation = \"subscription\"\nkind = \"duplicate_webhooks\"\nnth = 1\n"
            )
            .starts_with("hooks.toml:3: kind: `duplicate_webhooks` is not a fault kind"),
        );
    }

    #[test]
    fn the_standard_plan_is_four_faults_on_the_certification_batch() {
        let plan = standard();
        assert_eq!(plan.len(), 4);
        assert!(plan.iter().all(|r| matches!(r.which, Which::Nth(_))));
    }
}

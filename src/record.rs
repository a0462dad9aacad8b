//! The records a run produces, shared by the engine (which makes them), the journal (which
//! persists them as they happen), the evidence (which is built from them) and the reports:
//! exchanges and steps here, a flow's state and result in `flow.rs`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::models::Operation;
use crate::timestamp::Timestamp;
pub(crate) use flags::{Delivery, Expectation};
pub(crate) use flow::{CapturedValue, FlowResult, FlowState, FlowStatus, QuoteRef, TermsLink};
pub(crate) use phase::Phase;

pub(crate) mod fault;
mod flags;
mod flow;
pub(crate) mod phase;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    Passed,
    Failed,
    Error,
}

/// One assertion about an exchange. A failed warning is reported but does not fail the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Check {
    pub name: String,
    pub passed: bool,
    pub detail: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warning: bool,
}

impl Check {
    pub(crate) fn pass(name: &str, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            passed: true,
            detail: detail.into(),
            warning: false,
        }
    }

    pub(crate) fn fail(name: &str, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            passed: false,
            detail: detail.into(),
            warning: false,
        }
    }

    pub(crate) fn new(name: &str, passed: bool, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            passed,
            detail: detail.into(),
            warning: false,
        }
    }

    pub(crate) fn warning(mut self) -> Check {
        self.warning = true;
        self
    }
}

/// A recorded body, kept as its compact JSON text: a run of thousands of exchanges holds every
/// body until the evidence is written, and a parsed `Value` tree costs several times the text.
/// Text that was not JSON is kept as a JSON string. Parsed again only when something reads it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Body(Box<RawValue>);

impl Body {
    pub(crate) fn from_value(value: &Value) -> Body {
        Body(serde_json::value::to_raw_value(value).expect("a Value always serializes"))
    }

    pub(crate) fn null() -> Body {
        Body::from_value(&Value::Null)
    }

    /// The compact JSON text, exactly as written to the journal and evidence.json.
    pub(crate) fn json(&self) -> &str {
        self.0.get()
    }

    pub(crate) fn to_value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

impl PartialEq for Body {
    fn eq(&self, other: &Body) -> bool {
        self.json() == other.json()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RequestRecord {
    pub headers: BTreeMap<String, String>,
    pub body: Option<Body>,
    /// Set when `body` keeps only the first part of what was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Box<CutBody>>,
}

/// What a body kept cut in the record was, whole: its length and digest, so the evidence
/// still pins down exactly what travelled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CutBody {
    pub length: u64,
    pub sha256: String,
}

impl CutBody {
    /// The length and digest of `bytes`, when they are longer than `kept`. Boxed: most
    /// records have none, and every exchange a run holds pays for the field's size.
    pub(crate) fn of(bytes: &[u8], kept: usize) -> Option<Box<CutBody>> {
        (bytes.len() > kept).then(|| {
            Box::new(CutBody {
                length: bytes.len() as u64,
                sha256: crate::digest::sha256_hex(bytes),
            })
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ResponseRecord {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Body,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub body_truncated: bool,
    /// Set when `body` keeps only the first part of what was answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Box<CutBody>>,
    /// The whole JSON answer when `body` keeps only its first part: values are read from it
    /// (an id past the cut is still an id); never written to the record.
    #[serde(skip)]
    pub full_json: Option<std::sync::Arc<Value>>,
    /// The SHA-256 (hex) of the certificate the server presented, when the answer came over
    /// TLS: what lets the provider tell its staging from another server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_certificate_sha256: Option<Box<str>>,
    /// The `Content-Encoding` the answer came in (`gzip`, `br`, ...); `body` is decoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

impl ResponseRecord {
    /// The answer's JSON as the server sent it, however long.
    pub(crate) fn json(&self) -> Value {
        match &self.full_json {
            Some(full) => Value::clone(full),
            None => self.body.to_value(),
        }
    }

    /// A header's value, its name matched as HTTP matches names (case-insensitively).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    pub(crate) fn content_type(&self) -> Option<&str> {
        self.header("content-type")
    }

    /// The error the body states (problem details, `{"error": ...}`), whatever the status.
    pub(crate) fn error_words(&self) -> Option<String> {
        crate::problem::error_words_in(self.body.json(), self.content_type())
    }

    /// The server's words for a refusal, else an excerpt of its body; a redirect by where it
    /// pointed (never followed).
    pub(crate) fn describe(&self) -> String {
        if (300..400).contains(&self.status) {
            let location = self.header("location").unwrap_or("nowhere");
            return format!("a redirect to {location} (not followed)");
        }
        let words = crate::problem::describe(&self.body.to_value(), self.content_type());
        // A rejected token: the server's challenge says why (RFC 6750 `error=`).
        let challenge = (self.status == 401)
            .then(|| self.header("www-authenticate"))
            .flatten();
        match challenge {
            Some(value) => format!("{words} (WWW-Authenticate: {value})"),
            None => words,
        }
    }

    /// A 401 that refuses the bearer token, as opposed to one about something else a gateway
    /// wants (a missing API key, a client certificate): a challenge names its scheme (a
    /// `Bearer` one is about the token); without one, the words decide, and a 401 with no
    /// words about anything is taken to be about the token, as the spec's 401 is.
    pub(crate) fn rejects_token(&self) -> bool {
        rejects_token(
            self.status,
            self.header("www-authenticate"),
            &self.describe(),
        )
    }

    /// A 2xx whose body does not state an error: the server says it did what was asked.
    pub(crate) fn accepted(&self) -> bool {
        (200..300).contains(&self.status) && self.error_words().is_none()
    }
}

/// [`ResponseRecord::rejects_token`] from an answer's status, challenge and words.
pub(crate) fn rejects_token(status: u16, challenge: Option<&str>, words: &str) -> bool {
    if status != 401 {
        return false;
    }
    if let Some(challenge) = challenge {
        return challenge.to_ascii_lowercase().contains("bearer");
    }
    let words = words.to_ascii_lowercase();
    let about_token = ["token", "bearer", "authorization", "jwt"]
        .iter()
        .any(|w| words.contains(w));
    let about_other = ["key", "gateway", "certificate", "subscription", "header"]
        .iter()
        .any(|w| words.contains(w));
    about_token || !about_other
}

/// The value of header `name` in recorded headers, its name matched case-insensitively (as
/// HTTP matches names; servers and gateways spell them variously).
pub(crate) fn header<'a>(headers: &'a BTreeMap<String, String>, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// How a call to a token source ended (`ok`, `failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TokenOutcome {
    Ok,
    Failed,
}

/// One call to the token endpoint or command, as recorded: never a body or a token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TokenRequest {
    pub at: Timestamp,
    /// `POST https://…/oauth/token`, `command NAME`, or `read FILE`.
    pub request: String,
    pub outcome: TokenOutcome,
    pub duration_ms: u64,
    /// The fingerprint of the token it gave, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_fingerprint: Option<String>,
}

/// One HTTP attempt, exactly as sent and received (token redacted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Exchange {
    pub seq: u64,
    pub flow: String,
    pub step: String,
    pub operation: Operation,
    pub booking_number: Option<String>,
    pub attempt: u32,
    pub method: String,
    pub url: String,
    pub started_at: Timestamp,
    pub duration_ms: u64,
    pub request: RequestRecord,
    pub response: Option<ResponseRecord>,
    pub outcome: Outcome,
    pub checks: Vec<Check>,
    pub error: Option<String>,
    /// Written `expected_error: true` for a negative check.
    #[serde(
        rename = "expected_error",
        default,
        skip_serializing_if = "Expectation::is_acceptance"
    )]
    pub expectation: Expectation,
    /// Another attempt of the same request followed this one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retried: bool,
    /// Written as the flags `maybe_processed` and `reconciled`.
    #[serde(flatten)]
    pub delivery: Delivery,
    /// Which response layout was read (the spec leaves layouts open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// Each value read from the answer, and where it came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<ValueRead>,
    /// The fingerprint of the token the request carried: the evidence shows when it rotated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_fingerprint: Option<String>,
    /// One poll of an `[endpoints.NAME.wait]` whose condition did not hold yet: recorded,
    /// never counted (the call that satisfies the wait is the one that counts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub poll: bool,
    /// Written as the flags `pending` (a write answered, its outcome still to be confirmed)
    /// and `confirm` (a read confirming a write: never counted as an operation).
    #[serde(flatten)]
    pub phase: Phase,
}

/// A value the engine read from an answer (`id`, `contract_id`, …): what it found, or `None`,
/// and from where: a configured capture's JSONPath or the built-in reading's path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ValueRead {
    pub name: String,
    pub value: Option<String>,
    pub from: String,
}

impl Exchange {
    /// The answer carries the header by which the sandbox names itself.
    pub(crate) fn names_sandbox(&self) -> bool {
        (self.response.as_ref())
            .is_some_and(|r| r.headers.contains_key(crate::sandbox::SANDBOX_HEADER))
    }

    /// Counted by the provider's ledger: the server accepted it (or an earlier attempt it
    /// answered was lost and is reconciled), whatever ppcert could or could not read from the
    /// answer afterwards. Negative checks never count.
    pub(crate) fn counts_as_success(&self) -> bool {
        self.expectation.is_acceptance()
            && !self.poll
            && self.phase != Phase::Confirm
            && (self.delivery == Delivery::Reconciled
                || self.response.as_ref().is_some_and(ResponseRecord::accepted))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StepStatus {
    Passed,
    Failed,
    Skipped,
}

/// The end of one step of one flow instance, with the flow's state after it (for `--resume`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StepEvent {
    pub flow: String,
    pub step_index: usize,
    pub step: String,
    pub status: StepStatus,
    pub reason: Option<String>,
    pub started_at: Timestamp,
    pub duration_ms: u64,
    /// The flow's state after the step; written to the journal, left out of evidence.json.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
}

impl StepEvent {
    /// The step as the evidence keeps it: the flow's state is the journal's alone (for
    /// `--resume`), and a copy per step would grow a large run's memory for nothing.
    pub(crate) fn without_state(&self) -> StepEvent {
        StepEvent {
            flow: self.flow.clone(),
            step_index: self.step_index,
            step: self.step.clone(),
            status: self.status,
            reason: self.reason.clone(),
            started_at: self.started_at,
            duration_ms: self.duration_ms,
            state: None,
        }
    }
}

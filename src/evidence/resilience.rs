//! Grading a partner's reaction to the faults `ppcert proxy --faults` injected, from the
//! journal alone (so `verify` grades again what the session graded): each fault `handled`,
//! `mishandled` or `not_reached`, with what the client did next. The rules, by kind: after a
//! 429 or 503 the operation's next call came no earlier than `Retry-After`, and a refused
//! write was sent again (with the same `Idempotency-Key` if it carried one); after a lost or
//! held answer the staging holds the write once (the client read it back, retried with the
//! same key, or met a conflict it then resolved by reading); a duplicated webhook delivery was
//! acknowledged (2xx) both times.

use serde::{Deserialize, Serialize};

use crate::models::Operation;
use crate::record::fault::{FaultKind, FaultRule, InjectedFault, RelayedWebhook, Which, seconds};
use crate::record::{Delivery, Exchange};
use crate::timestamp::Timestamp;

/// The check ppcert's own end-of-session read carries: never the partner's doing.
const OWN_READ: &str = "confirming read";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FaultVerdict {
    Handled,
    Mishandled,
    NotReached,
}

impl FaultVerdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FaultVerdict::Handled => "handled",
            FaultVerdict::Mishandled => "mishandled",
            FaultVerdict::NotReached => "not reached",
        }
    }
}

/// One fault of the plan, as graded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct GradedFault {
    pub operation: Operation,
    #[serde(flatten)]
    pub kind: FaultKind,
    /// Which call of the operation it was; absent when it was not reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking_number: Option<String>,
    pub verdict: FaultVerdict,
    /// What the client did next, in words.
    pub client_did: String,
}

/// The evidence's `resilience` section: the requirement (every fault handled) and each fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Resilience {
    pub required: u32,
    pub handled: u32,
    pub met: bool,
    pub faults: Vec<GradedFault>,
}

/// Where a fault's grading stands.
enum State {
    /// Nothing the client did since bears on it yet.
    Waiting,
    /// A lost or held write retried and met a conflict: handled once a read shows it.
    Conflicted(u16),
    Decided(FaultVerdict, String),
}

struct Open {
    fault: InjectedFault,
    state: State,
}

/// Grades the faults of one record, fed its journal's lines in order.
#[derive(Default)]
pub(crate) struct Grader {
    rules: Option<Vec<FaultRule>>,
    open: Vec<Open>,
}

fn key_of(exchange: &Exchange) -> Option<&str> {
    (exchange.request.headers.iter())
        .find(|(name, _)| name.eq_ignore_ascii_case("idempotency-key"))
        .map(|(_, value)| value.as_str())
}

/// The same call of the partner's: same operation, and the same booking where both name one.
fn same_call(fault: &InjectedFault, operation: Operation, booking: Option<&str>) -> bool {
    fault.operation == operation
        && match (fault.booking_number.as_deref(), booking) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
}

fn after(fault: &InjectedFault, at: Timestamp) -> f64 {
    (at.millis() - fault.at.millis()) as f64 / 1000.0
}

impl Grader {
    /// The plan, from its journal line.
    pub(crate) fn plan(&mut self, rules: Vec<FaultRule>) {
        self.rules = Some(rules);
    }

    /// Whether the record holds a plan (a `--faults` session).
    pub(crate) fn active(&self) -> bool {
        self.rules.is_some()
    }

    /// A fault as injected: a later one on the same call is the client's next call too.
    pub(crate) fn fault(&mut self, fault: InjectedFault) {
        let booking = fault.booking_number.clone();
        let key = fault.idempotency_key.clone();
        if fault.kind != FaultKind::DuplicateWebhook {
            self.next_call(
                fault.operation,
                booking.as_deref(),
                fault.at,
                key.as_deref(),
            );
        }
        self.open.push(Open {
            fault,
            state: State::Waiting,
        });
    }

    /// A webhook delivery passed on to the partner's receiver: the second of a duplicate
    /// decides its fault (the receiver's first answer is in the fault's `upstream_status`).
    pub(crate) fn webhook(&mut self, relayed: &RelayedWebhook) {
        let waiting = (self.open.iter_mut().rev()).find(|open| {
            open.fault.kind == FaultKind::DuplicateWebhook && matches!(open.state, State::Waiting)
        });
        let Some(open) = waiting.filter(|_| relayed.duplicate) else {
            return;
        };
        let said = |status: Option<u16>| status.map_or("no answer".into(), |s| s.to_string());
        let (first, second) = (open.fault.upstream_status, relayed.status);
        let acknowledged = |s: Option<u16>| s.is_some_and(|s| (200..300).contains(&s));
        open.state = if acknowledged(first) && acknowledged(second) {
            State::Decided(
                FaultVerdict::Handled,
                format!(
                    "acknowledged the delivery and its duplicate ({} then {})",
                    said(first),
                    said(second)
                ),
            )
        } else {
            State::Decided(
                FaultVerdict::Mishandled,
                format!(
                    "answered the delivery {} and its duplicate {}: a receiver acknowledges a delivery it already processed with a 2xx (else the staging redelivers it)",
                    said(first),
                    said(second)
                ),
            )
        };
    }

    /// An exchange recorded after the faults so far.
    pub(crate) fn exchange(&mut self, exchange: &Exchange) {
        if self.open.is_empty() || exchange.checks.iter().any(|c| c.name == OWN_READ) {
            return;
        }
        let booking = exchange.booking_number.as_deref();
        if exchange.operation == Operation::ReadContracts {
            if exchange.response.as_ref().is_some_and(|r| r.accepted()) {
                self.read_back(booking, exchange.started_at);
            }
            return;
        }
        let key = key_of(exchange);
        self.next_call(exchange.operation, booking, exchange.started_at, key);
        for open in self.open.iter_mut() {
            let waiting = matches!(open.state, State::Waiting);
            let lost = matches!(
                open.fault.kind,
                FaultKind::LostAnswer | FaultKind::Delay { .. }
            );
            if !waiting
                || !lost
                || exchange.started_at.millis() <= open.fault.at.millis()
                || !same_call(&open.fault, exchange.operation, booking)
            {
                continue;
            }
            open.state = retried(&open.fault, exchange, key);
        }
    }

    /// The client's next call of an operation: it decides the 429s and 503s waiting on it.
    fn next_call(
        &mut self,
        op: Operation,
        booking: Option<&str>,
        at: Timestamp,
        key: Option<&str>,
    ) {
        for open in self.open.iter_mut() {
            let FaultKind::Status {
                status,
                retry_after_ms,
            } = open.fault.kind
            else {
                continue;
            };
            if !matches!(open.state, State::Waiting)
                || at.millis() <= open.fault.at.millis()
                || !same_call(&open.fault, op, booking)
            {
                continue;
            }
            let waited = after(&open.fault, at);
            let early =
                retry_after_ms.filter(|ms| at.millis() - open.fault.at.millis() < *ms as i64);
            let lost_key = match (open.fault.idempotency_key.as_deref(), key) {
                (Some(first), Some(again)) if first != again => Some("another Idempotency-Key"),
                (Some(_), None) => Some("no Idempotency-Key"),
                _ => None,
            };
            open.state = match (early, lost_key) {
                (Some(ms), _) => State::Decided(
                    FaultVerdict::Mishandled,
                    format!(
                        "called {op} again {waited:.2} s later, before the Retry-After of {} the {status} gave",
                        seconds(ms)
                    ),
                ),
                (None, Some(which)) => State::Decided(
                    FaultVerdict::Mishandled,
                    format!(
                        "sent the refused {op} again {waited:.2} s later with {which}: the staging cannot tell it is the same write"
                    ),
                ),
                (None, None) => State::Decided(
                    FaultVerdict::Handled,
                    match retry_after_ms {
                        Some(ms) => format!(
                            "sent the {op} again {waited:.2} s later, after the Retry-After of {}",
                            seconds(ms)
                        ),
                        None => format!("sent the refused {op} again {waited:.2} s later"),
                    },
                ),
            };
        }
    }

    /// A read of `booking`'s contracts by the partner: lost writes of it are known now.
    fn read_back(&mut self, booking: Option<&str>, at: Timestamp) {
        for open in self.open.iter_mut() {
            let lost = matches!(
                open.fault.kind,
                FaultKind::LostAnswer | FaultKind::Delay { .. }
            );
            let concerns = booking.is_some() && open.fault.booking_number.as_deref() == booking;
            if !lost || !concerns || at.millis() <= open.fault.at.millis() {
                continue;
            }
            open.state = match open.state {
                State::Waiting => State::Decided(
                    FaultVerdict::Handled,
                    format!(
                        "read the booking's contracts back {:.2} s later",
                        after(&open.fault, at)
                    ),
                ),
                State::Conflicted(status) => State::Decided(
                    FaultVerdict::Handled,
                    format!(
                        "sent it again, met {status}, then read the booking's contracts: the first had taken effect"
                    ),
                ),
                State::Decided(..) => continue,
            };
        }
    }

    /// The section, once every line was fed; `None` for a record without a plan.
    pub(crate) fn finish(self) -> Option<Resilience> {
        let rules = self.rules?;
        let mut faults: Vec<GradedFault> = Vec::new();
        let mut reached = vec![false; rules.len()];
        for open in self.open {
            if let Some(hit) = reached.get_mut(open.fault.rule) {
                *hit = true;
            }
            let (verdict, client_did) = match open.state {
                State::Decided(verdict, did) => (verdict, did),
                State::Conflicted(status) => (
                    FaultVerdict::Mishandled,
                    format!(
                        "sent it again, met {status}, and never read the booking's contracts: it cannot know the first took effect"
                    ),
                ),
                State::Waiting => unanswered(&open.fault),
            };
            faults.push(GradedFault {
                operation: open.fault.operation,
                kind: open.fault.kind,
                call: Some(open.fault.call),
                at: Some(open.fault.at),
                booking_number: open.fault.booking_number,
                verdict,
                client_did,
            });
        }
        for (rule, _) in rules.iter().zip(&reached).filter(|(_, hit)| !**hit) {
            let call = match rule.which {
                Which::Nth(n) => format!("call {n}"),
                Which::Every(n) => format!("every call {n}"),
            };
            faults.push(GradedFault {
                operation: rule.operation,
                kind: rule.kind.clone(),
                call: None,
                at: None,
                booking_number: None,
                verdict: FaultVerdict::NotReached,
                client_did: format!(
                    "the client never made the {} {call} the plan names",
                    rule.operation
                ),
            });
        }
        let handled = faults
            .iter()
            .filter(|f| f.verdict == FaultVerdict::Handled)
            .count() as u32;
        let required = faults.len() as u32;
        Some(Resilience {
            required,
            handled,
            met: handled == required,
            faults,
        })
    }
}

/// A lost or held write's retry: what it shows.
fn retried(fault: &InjectedFault, exchange: &Exchange, key: Option<&str>) -> State {
    let status = exchange.response.as_ref().map(|r| r.status);
    let op = fault.operation;
    let same_key = fault.idempotency_key.is_some() && fault.idempotency_key.as_deref() == key;
    let first_taken = fault
        .upstream_status
        .is_some_and(|s| (200..300).contains(&s));
    let conflict = matches!(
        (op, status),
        (Operation::QuoteDeletion, Some(404)) | (_, Some(409))
    );
    let proves = matches!(
        op,
        Operation::Update | Operation::FlightCancellation | Operation::QuoteDeletion
    );
    match status {
        Some(s) if conflict && proves => State::Decided(
            FaultVerdict::Handled,
            format!("sent it again and met {s}, which shows the first took effect"),
        ),
        Some(s) if conflict || exchange.delivery == Delivery::Reconciled => State::Conflicted(s),
        Some(s) if (200..300).contains(&s) && same_key => State::Decided(
            FaultVerdict::Handled,
            format!(
                "sent it again with the same Idempotency-Key; the staging answered {s} as to the first"
            ),
        ),
        Some(s) if (200..300).contains(&s) && first_taken => State::Decided(
            FaultVerdict::Mishandled,
            format!(
                "sent it again without the first's Idempotency-Key and the staging took it again ({s}): a second {op}"
            ),
        ),
        Some(s) if (200..300).contains(&s) => State::Decided(
            FaultVerdict::Handled,
            format!("sent it again; the staging, which had not taken the first, answered {s}"),
        ),
        // Refused for another reason, or lost again: still to be settled.
        _ => State::Waiting,
    }
}

/// A fault the client never reacted to.
fn unanswered(fault: &InjectedFault) -> (FaultVerdict, String) {
    let op = fault.operation;
    match &fault.kind {
        FaultKind::Status { status, .. } => (
            FaultVerdict::Mishandled,
            format!("never sent the {op} again after the {status}: taken as a refusal"),
        ),
        FaultKind::LostAnswer => (
            FaultVerdict::Mishandled,
            format!(
                "did nothing after the lost answer: neither retried the {op} nor read the booking's contracts, so it cannot know the staging took it"
            ),
        ),
        FaultKind::DuplicateWebhook => (
            FaultVerdict::Mishandled,
            "the duplicate delivery was not passed on: the session ended first".into(),
        ),
        FaultKind::Delay { .. } => (
            FaultVerdict::Handled,
            format!(
                "sent the {op} once: waited for the held answer, or left it without writing twice"
            ),
        ),
    }
}

// Beside this file, for length; it names its imports (`.ci/module-graph` would read a
// `use super::*` of a file outside resilience/ as an import running up).
#[cfg(test)]
#[path = "resilience_tests.rs"]
mod tests;

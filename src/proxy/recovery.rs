//! A partner's recovery from a lost answer, graded as the provider counts it: a write whose
//! answer never reached the partner (the staging may have taken it) is held back from the
//! record, with the partner's retries of it, until what happened is known: a retry the staging
//! accepted (an idempotent one), a conflict that itself proves the first write (a used quote, a
//! reported flight, a deleted quote), or a read of the booking's contracts that shows it. Then
//! the call is recorded as `run` records a reconciled one: the lost attempt and any refused
//! retry `retried`, the attempt that settled it counted once. What the partner's traffic never
//! settles, the proxy reads itself when the session ends (a GET: nothing is written).

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use super::claims::ClaimWatch;
use super::exchange::Forwarded;
use super::json::contract_ids;
use super::routes::Recognised;
use super::sequencing::NOT_REUSED;
use crate::answer::reading::claimed_contract_status;
use crate::models::{CHANGE_FOR_ANY_REASON, Operation, WITHDRAWAL};
use crate::record::{Check, Delivery, Exchange, Outcome};
use crate::secret::Secret;

/// The check every recorded answer gets (see [`Forwarded::into_exchange`]).
const ACCEPTED: &str = "the server accepted it";
pub(crate) const RECONCILED: &str = "reconciled";
/// How many calls may wait on a recovery at once: a partner losing answers for hours must not
/// grow the proxy's memory; past it, a call is recorded as it stands.
const MAX_HELD: usize = 4096;

/// The error by which the proxy says it never reached the upstream: nothing was sent.
pub(crate) const NOT_SENT: &str = "could not connect";

/// One write whose answer was lost, and the partner's attempts of it since.
struct Held {
    attempts: Vec<Exchange>,
    token: Secret,
    /// A claim's contract, from its path.
    contract: Option<String>,
}

/// The calls waiting on a recovery, by operation and booking.
#[derive(Default)]
pub(crate) struct Recoveries {
    held: Mutex<HashMap<(Operation, String), Held>>,
}

/// What became of a held call.
pub(crate) enum Settled {
    /// Not yet known: keep holding.
    Held,
    /// Record these now, in order.
    Record(Vec<Exchange>),
}

fn is_write(op: Operation) -> bool {
    !matches!(op, Operation::ReadContracts | Operation::Quote)
}

/// Whether a lost answer to `op` of `booking` is held until the partner's recovery shows
/// what happened (a write of a known booking), rather than recorded as it stands.
pub(crate) fn holds(op: Operation, booking: Option<&str>) -> bool {
    is_write(op) && booking.is_some()
}

/// The answer the staging gives a write it already took: for a deletion the quote is gone.
fn conflict(op: Operation, exchange: &Exchange) -> bool {
    let status = exchange.response.as_ref().map(|r| r.status);
    matches!(
        (op, status),
        (Operation::QuoteDeletion, Some(404)) | (_, Some(409))
    )
}

/// The answer never came back though the request was sent: the staging may have taken it.
pub(crate) fn lost(exchange: &Exchange) -> bool {
    exchange.response.is_none()
        && exchange
            .error
            .as_deref()
            .is_some_and(|e| !e.contains(NOT_SENT) && !e.starts_with("refused locally"))
}

/// `exchange` counted once, as the attempt that settled a lost call: its refusal is the first
/// write's success, shown by `how`.
fn reconcile(exchange: &mut Exchange, how: &str) {
    exchange.delivery = Delivery::Reconciled;
    exchange.retried = false;
    exchange.checks.retain(|c| c.name != ACCEPTED);
    exchange.checks.push(Check::pass(
        RECONCILED,
        format!("the answer to an earlier attempt was lost; {how}; counted once"),
    ));
    exchange.outcome = outcome(exchange);
}

fn outcome(exchange: &Exchange) -> Outcome {
    if exchange.checks.iter().any(|c| !c.passed && !c.warning) {
        Outcome::Failed
    } else if exchange.response.is_none() && exchange.delivery != Delivery::Reconciled {
        Outcome::Error
    } else {
        Outcome::Passed
    }
}

/// A retry of a write whose answer was lost is not a booking number used again.
fn retry_not_reuse(exchange: &mut Exchange) {
    for check in exchange.checks.iter_mut().filter(|c| c.name == NOT_REUSED) {
        *check = Check::pass(
            NOT_REUSED,
            "a retry of a subscription whose answer was lost, not a second use",
        );
    }
    exchange.outcome = outcome(exchange);
}

impl Recoveries {
    /// Takes the partner's write `exchange` in: held while it or an earlier lost attempt of
    /// the same call is unsettled, else what to record now.
    pub(crate) fn write(
        &self,
        recognised: &Recognised,
        mut exchange: Exchange,
        token: &Secret,
    ) -> Settled {
        let op = exchange.operation;
        let Some(booking) = exchange.booking_number.clone().filter(|_| is_write(op)) else {
            return Settled::Record(vec![exchange]);
        };
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let key = (op, booking);
        let Some(call) = held.get_mut(&key) else {
            if lost(&exchange) && held.len() < MAX_HELD {
                exchange.delivery = Delivery::MaybeProcessed;
                let contract = (recognised.values.iter())
                    .find(|(name, _)| name.contains("contract"))
                    .map(|(_, id)| id.clone());
                let attempts = vec![exchange];
                let token = token.clone();
                held.insert(
                    key,
                    Held {
                        attempts,
                        token,
                        contract,
                    },
                );
                return Settled::Held;
            }
            return Settled::Record(vec![exchange]);
        };
        exchange.attempt = call.attempts.len() as u32 + 1;
        retry_not_reuse(&mut exchange);
        if let Some(last) = call.attempts.last_mut() {
            last.retried = true;
        }
        let proves = matches!(
            op,
            Operation::Update | Operation::FlightCancellation | Operation::QuoteDeletion
        );
        if exchange.counts_as_success() {
            exchange.checks.push(Check::pass(
                RECONCILED,
                "the answer to an earlier attempt was lost; the partner retried and the staging accepted it (the same write, or its idempotency key answered as the first); counted once",
            ));
        } else if proves && conflict(op, &exchange) {
            reconcile(
                &mut exchange,
                "the conflict shows the lost attempt took effect",
            );
        } else {
            if lost(&exchange) {
                exchange.delivery = Delivery::MaybeProcessed;
            }
            call.attempts.push(exchange);
            return Settled::Held;
        }
        let mut attempts = held.remove(&key).map(|c| c.attempts).unwrap_or_default();
        attempts.push(exchange);
        Settled::Record(attempts)
    }

    /// A read of a booking's contracts (the partner's, or the proxy's own): the held calls of
    /// that booking it shows took effect are settled, to be recorded before it.
    /// A claim settled so is watched in `claims`, so the read's status confirms it.
    pub(crate) fn read(&self, forwarded: &Forwarded, claims: &ClaimWatch) -> Vec<Exchange> {
        let Some(booking) = &forwarded.booking else {
            return Vec::new();
        };
        let Some(answer) = forwarded.response.as_ref().filter(|r| r.accepted()) else {
            return Vec::new();
        };
        let body = answer.json();
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let mut settled = Vec::new();
        for op in [Operation::Subscription, Operation::Claim] {
            let key = (op, booking.clone());
            let Some(call) = held.get(&key) else { continue };
            let Some(how) = shown(op, &body, call.contract.as_deref()) else {
                continue;
            };
            let Some(mut call) = held.remove(&key) else {
                continue;
            };
            if let Some(contract) = &call.contract {
                claims.watch(booking, contract, &call.token);
            }
            let count = call.attempts.len();
            for (i, attempt) in call.attempts.iter_mut().enumerate() {
                if i + 1 == count {
                    reconcile(attempt, &how);
                } else {
                    attempt.retried = true;
                }
            }
            settled.extend(call.attempts);
        }
        settled
    }

    /// The held calls left when the session ends: booking, operation and the partner's token.
    pub(crate) fn unsettled(&self) -> Vec<(String, Operation, Secret)> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let mut left: Vec<_> = held
            .iter()
            .map(|((op, booking), call)| (booking.clone(), *op, call.token.clone()))
            .collect();
        left.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        left
    }

    /// Everything still held, as it stands: unsettled, the provider may have counted it.
    pub(crate) fn drain(&self) -> Vec<Exchange> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let mut keys: Vec<_> = held.keys().cloned().collect();
        keys.sort();
        keys.into_iter()
            .filter_map(|key| held.remove(&key))
            .flat_map(|call| call.attempts)
            .collect()
    }
}

/// How a contracts read shows the held `op` took effect, if it does.
fn shown(op: Operation, body: &Value, contract: Option<&str>) -> Option<String> {
    match op {
        Operation::Subscription => {
            let mut ids = Vec::new();
            contract_ids(body, &mut ids);
            (!ids.is_empty()).then(|| "a read of the booking's contracts shows them".to_string())
        }
        Operation::Claim => {
            let contract = contract?;
            [WITHDRAWAL, CHANGE_FOR_ANY_REASON]
                .iter()
                .find_map(|pt| claimed_contract_status(body, pt, contract))
                .map(|_| {
                    format!("a read of the booking's contracts shows contract {contract} claimed")
                })
        }
        _ => None,
    }
}

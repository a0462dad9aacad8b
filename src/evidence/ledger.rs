//! The provider's ledger: what a requirement's counts are, from the exchanges recorded.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::confirmed::ClaimConfirmations;
use super::counted::Counted;
use super::pending::{PendingWrites, Settled};
use crate::models::Operation;
use crate::record::{Delivery, Exchange, Phase};
use crate::scenario::Requirement;

/// One requirement as the provider would count it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RequirementResult {
    /// An operation, or `resilience` (see [`Counted`]).
    pub operation: Counted,
    pub required: u32,
    pub succeeded: u32,
    pub failed: u32,
    /// Requests whose answer was lost and could not be confirmed either way: the provider may
    /// have counted them.
    pub unconfirmed: u32,
    pub met: bool,
}

/// What one operation's exchanges came to.
#[derive(Default, Clone, Copy)]
struct Counts {
    succeeded: u32,
    failed: u32,
    unconfirmed: u32,
}

/// A call (same operation, flow and step) with an attempt lost so far: how many were lost,
/// whether its latest attempt counts as a success, and whether that latest attempt was counted
/// failed as the call's last (a run stopped after it; a resumed run may go on with the call).
struct Lost {
    lost: u32,
    settled: bool,
    counted_failed: bool,
}

/// The provider's ledger, counted one exchange at a time in the order recorded: successes
/// counted once, lost-and-unreconciled requests apart. Nothing is kept of an exchange but its
/// counts, and of a call only while an attempt of it is lost, so a record read from the journal
/// is counted without being held.
#[derive(Default)]
pub(crate) struct Ledger {
    counts: HashMap<Operation, Counts>,
    lost: HashMap<(Operation, String, String), Lost>,
    /// Accepted claims count only once their status is read and not flagged.
    claims: ClaimConfirmations,
    /// Other writes answered pending count once a confirmation read settles them.
    pending: PendingWrites,
}

impl Ledger {
    pub(crate) fn add(&mut self, exchange: &Exchange) {
        let counts = self.counts.entry(exchange.operation).or_default();
        let success = exchange.counts_as_success();
        self.claims.add(exchange, success);
        let confirming = exchange.phase == Phase::Confirm;
        // An attempt no retry followed, without success: the call failed (unless a resumed run
        // goes on with it: below).
        let fails = !success
            && !exchange.retried
            && !exchange.poll
            && !confirming
            && exchange.expectation.is_acceptance();
        if success {
            // A claim's success is counted when its status is known (`results`), a pending
            // write's when a confirmation read settles it (below).
            let later = exchange.operation == Operation::Claim || PendingWrites::holds(exchange);
            counts.succeeded += u32::from(!later);
        } else if fails {
            counts.failed += 1;
        }
        if let Some((operation, settled)) = self.pending.add(exchange, success) {
            let counts = self.counts.entry(operation).or_default();
            match settled {
                Settled::Succeeded => counts.succeeded += 1,
                Settled::Failed => counts.failed += 1,
                Settled::Unconfirmed => counts.unconfirmed += 1,
            }
        }
        let counts = self.counts.entry(exchange.operation).or_default();
        if self.lost.is_empty() && exchange.delivery != Delivery::MaybeProcessed {
            return; // no call has anything unconfirmed: no key to build for this one
        }
        let key = (
            exchange.operation,
            exchange.flow.clone(),
            exchange.step.clone(),
        );
        // Attempt 1 begins another call: the one before it under the same key is settled.
        if exchange.attempt == 1
            && let Some(previous) = self.lost.remove(&key)
        {
            counts.unconfirmed += settle(exchange.operation, &previous);
        }
        // A later attempt of a call whose lost attempt was counted as its last: a resumed run
        // went on with the call, so that attempt was not its end and is no failure.
        if exchange.attempt > 1
            && let Some(call) = self.lost.get_mut(&key)
            && std::mem::take(&mut call.counted_failed)
        {
            counts.failed -= 1;
        }
        if exchange.delivery == Delivery::MaybeProcessed {
            let call = self.lost.entry(key).or_insert(Lost {
                lost: 0,
                settled: false,
                counted_failed: false,
            });
            call.lost += 1;
            call.settled = success;
            call.counted_failed = fails;
        } else if let Some(call) = self.lost.get_mut(&key) {
            call.settled = success;
        }
    }

    /// One result per requirement that applies (flight sellers' only to them).
    pub(crate) fn results(
        mut self,
        requirements: &[Requirement],
        flight_seller: bool,
    ) -> Vec<RequirementResult> {
        for ((operation, _, _), call) in std::mem::take(&mut self.lost) {
            self.counts.entry(operation).or_default().unconfirmed += settle(operation, &call);
        }
        // A write still pending when the run ended was never confirmed.
        for operation in std::mem::take(&mut self.pending).unsettled() {
            self.counts.entry(operation).or_default().unconfirmed += 1;
        }
        // A claim the provider accepted counts when its status was read and not flagged; a
        // flagged one failed, one never read is unconfirmed.
        let claims = self.claims.tally();
        let counts = self.counts.entry(Operation::Claim).or_default();
        counts.succeeded += claims.confirmed;
        counts.failed += claims.flagged;
        counts.unconfirmed += claims.unread;
        requirements
            .iter()
            .filter(|r| flight_seller || !r.flight_sellers_only)
            .map(|r| {
                let counts = self.counts.get(&r.operation).copied().unwrap_or_default();
                RequirementResult {
                    operation: r.operation.into(),
                    required: r.required,
                    succeeded: counts.succeeded,
                    failed: counts.failed,
                    unconfirmed: counts.unconfirmed,
                    met: counts.succeeded >= r.required,
                }
            })
            .collect()
    }
}

/// Requests of one call that may have taken effect without our knowing. A quote can be
/// created once per lost attempt, since nothing makes quotes unique; any other write takes
/// effect at most once, and only counts as unconfirmed when the call ended without a success
/// or a reconciliation to show for it.
fn settle(operation: Operation, call: &Lost) -> u32 {
    match operation {
        Operation::Quote => call.lost,
        _ if call.lost > 0 && !call.settled => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The provider's ledger of `exchanges`, counted in order.
    fn ledger(
        requirements: &[Requirement],
        flight_seller: bool,
        exchanges: &[Exchange],
    ) -> Vec<RequirementResult> {
        let mut ledger = Ledger::default();
        exchanges.iter().for_each(|exchange| ledger.add(exchange));
        ledger.results(requirements, flight_seller)
    }

    /// One attempt of `flow`'s call: `status` None is an answer lost (maybe processed).
    fn attempt(op: Operation, flow: &str, number: u32, status: Option<u16>) -> Exchange {
        Exchange {
            seq: 0,
            flow: flow.into(),
            step: op.to_string(),
            operation: op,
            booking_number: None,
            attempt: number,
            method: "POST".into(),
            url: "http://127.0.0.1/x".into(),
            started_at: crate::timestamp::Timestamp::EPOCH,
            duration_ms: 0,
            request: crate::record::RequestRecord {
                headers: Default::default(),
                body: None,
                cut: None,
            },
            response: status.map(|status| crate::record::ResponseRecord {
                status,
                headers: Default::default(),
                body: crate::record::Body::null(),
                body_truncated: false,
                full_json: None,
                cut: None,
                tls_certificate_sha256: None,
                encoding: None,
            }),
            outcome: crate::record::Outcome::Error,
            checks: Vec::new(),
            error: None,
            expectation: crate::record::Expectation::Acceptance,
            retried: false,
            delivery: match status {
                None => Delivery::MaybeProcessed,
                Some(_) => Delivery::Answered,
            },
            layout: None,
            reads: Vec::new(),
            token_fingerprint: None,
            poll: false,
            phase: Default::default(),
        }
    }

    fn retried(mut exchange: Exchange) -> Exchange {
        exchange.retried = true;
        exchange
    }

    /// The provider's arithmetic: a success counts once; a lost quote attempt may have made a
    /// quote each time, any other lost write at most once and not when the call settled; a
    /// refusal the scenario expected never counts; flight sellers' requirements only for them.
    #[test]
    fn the_ledger_counts_as_the_provider_does() {
        use Operation::{Claim, FlightCancellation, Quote, Subscription};
        let mut reconciled = attempt(Subscription, "a#1", 2, Some(409));
        reconciled.delivery = Delivery::Reconciled;
        let mut refusal = attempt(Claim, "c#1", 1, Some(404));
        refusal.expectation = crate::record::Expectation::Refusal;
        let mut error_body = attempt(Claim, "a#1", 1, Some(200));
        if let Some(response) = error_body.response.as_mut() {
            response.body =
                crate::record::Body::from_value(&serde_json::json!({"error": "no such contract"}));
        }
        let exchanges = vec![
            // Two lost quote attempts, then a success: one counted, two may exist.
            retried(attempt(Quote, "a#1", 1, None)),
            retried(attempt(Quote, "a#1", 2, None)),
            attempt(Quote, "a#1", 3, Some(201)),
            // A lost subscription whose retry met a conflict shown to be our own: counted once.
            retried(attempt(Subscription, "a#1", 1, None)),
            reconciled,
            // A lost subscription never settled: unconfirmed once, failed once.
            retried(attempt(Subscription, "b#1", 1, None)),
            attempt(Subscription, "b#1", 2, None),
            // The same step called again later is another call.
            attempt(Subscription, "b#1", 1, Some(201)),
            // A 2xx whose body states an error is no success.
            error_body,
            refusal,
            attempt(FlightCancellation, "a#1", 1, Some(201)),
        ];
        let requirement = |operation, required, flight_sellers_only| Requirement {
            operation,
            required,
            flight_sellers_only,
        };
        let requirements = [
            requirement(Quote, 1, false),
            requirement(Subscription, 3, false),
            requirement(Claim, 1, false),
            requirement(FlightCancellation, 1, true),
        ];
        let counted = |r: &RequirementResult| (r.succeeded, r.failed, r.unconfirmed, r.met);
        let ledger_of = |seller| -> Vec<_> {
            ledger(&requirements, seller, &exchanges)
                .iter()
                .map(|r| (r.operation.operation().expect("an operation"), counted(r)))
                .collect()
        };
        assert_eq!(
            ledger_of(true),
            vec![
                (Quote, (1, 0, 2, true)),
                (Subscription, (2, 1, 1, false)),
                (Claim, (0, 1, 0, false)),
                (FlightCancellation, (1, 0, 0, true)),
            ]
        );
        assert_eq!(ledger_of(false).len(), 3, "not a flight seller");
    }

    /// A run stopped after a lost attempt, and the resumed run went on with the call (its next
    /// attempt numbered on): the lost attempt was not the call's end, so no failure, and the
    /// success settles it. A run that never went on keeps both marks.
    #[test]
    fn a_call_a_resumed_run_went_on_with_is_no_failure() {
        use Operation::Subscription;
        let requirements = [Requirement {
            operation: Subscription,
            required: 1,
            flight_sellers_only: false,
        }];
        let counted = |exchanges: &[Exchange]| {
            let r = &ledger(&requirements, false, exchanges)[0];
            (r.succeeded, r.failed, r.unconfirmed)
        };
        let stopped = attempt(Subscription, "a#1", 1, None);
        assert_eq!(counted(std::slice::from_ref(&stopped)), (0, 1, 1));
        let went_on = [stopped.clone(), attempt(Subscription, "a#1", 2, Some(201))];
        assert_eq!(counted(&went_on), (1, 0, 0));
        // Lost again after going on, and never settled: one failure, one unconfirmed.
        let lost_again = [stopped, attempt(Subscription, "a#1", 2, None)];
        assert_eq!(counted(&lost_again), (0, 1, 1));
    }

    /// A claim counts once its status is read (in its answer or a later contracts read of
    /// its booking) and is not MANUAL_VERIFICATION_NEEDED; flagged fails, unread is unconfirmed.
    #[test]
    fn claims_count_only_when_their_status_is_read_and_not_flagged() {
        use Operation::{Claim, ReadContracts};
        let read = |mut exchange: Exchange, status: &str| {
            exchange.booking_number = Some(exchange.flow.clone());
            exchange.reads.push(crate::record::ValueRead {
                name: "claim_status".into(),
                value: Some(status.into()),
                from: "status".into(),
            });
            exchange
        };
        let booked = |mut exchange: Exchange| {
            exchange.booking_number = Some(exchange.flow.clone());
            exchange
        };
        let exchanges = vec![
            read(attempt(Claim, "a", 1, Some(201)), "ACCEPTED"),
            read(
                attempt(Claim, "b", 1, Some(201)),
                "MANUAL_VERIFICATION_NEEDED",
            ),
            booked(attempt(Claim, "c", 1, Some(201))),
            booked(attempt(Claim, "d", 1, Some(202))),
            // A contracts read before any claim of its booking confirms nothing.
            read(attempt(ReadContracts, "e", 1, Some(200)), "ACCEPTED"),
            booked(attempt(Claim, "e", 1, Some(201))),
            read(attempt(ReadContracts, "d", 1, Some(200)), "REFUNDABLE"),
        ];
        let requirements = [Requirement {
            operation: Claim,
            required: 2,
            flight_sellers_only: false,
        }];
        let result = &ledger(&requirements, false, &exchanges)[0];
        assert_eq!(
            (
                result.succeeded,
                result.failed,
                result.unconfirmed,
                result.met
            ),
            (2, 1, 2, true)
        );
        let flagged_only = &ledger(&requirements, false, &exchanges[1..3])[0];
        assert_eq!(
            (
                flagged_only.succeeded,
                flagged_only.failed,
                flagged_only.unconfirmed
            ),
            (0, 1, 1)
        );
        assert!(!flagged_only.met);
    }
}

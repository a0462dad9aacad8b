//! The provider's ledger: what a requirement's counts are, from the exchanges recorded.

use serde::{Deserialize, Serialize};

use crate::models::Operation;
use crate::record::{Delivery, Exchange};
use crate::scenario::Requirement;

/// One requirement as the provider would count it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RequirementResult {
    pub operation: Operation,
    pub required: u32,
    pub succeeded: u32,
    pub failed: u32,
    /// Requests whose answer was lost and could not be confirmed either way: the provider may
    /// have counted them.
    pub unconfirmed: u32,
    pub met: bool,
}

/// The provider's ledger: successes counted once, lost-and-unreconciled requests apart.
pub(super) fn ledger(
    requirements: &[Requirement],
    flight_seller: bool,
    exchanges: &[Exchange],
) -> Vec<RequirementResult> {
    requirements
        .iter()
        .filter(|r| flight_seller || !r.flight_sellers_only)
        .map(|r| {
            let of_kind = || exchanges.iter().filter(move |e| e.operation == r.operation);
            let succeeded = of_kind().filter(|e| e.counts_as_success()).count() as u32;
            let failed = of_kind()
                .filter(|e| !e.retried && e.expectation.is_acceptance() && !e.counts_as_success())
                .count() as u32;
            RequirementResult {
                operation: r.operation,
                required: r.required,
                succeeded,
                failed,
                unconfirmed: unconfirmed(r.operation, exchanges),
                met: succeeded >= r.required,
            }
        })
        .collect()
}

/// Requests that may have taken effect without our knowing. Attempts of one call are grouped
/// (same flow, step and operation, attempt numbers counting up from 1). A quote can be created
/// once per lost attempt, since nothing makes quotes unique; any other write takes effect at
/// most once, and only counts as unconfirmed when the call ended without a success or a
/// reconciliation to show for it.
fn unconfirmed(operation: Operation, exchanges: &[Exchange]) -> u32 {
    let settle = |attempts: &[&Exchange]| -> u32 {
        let lost = (attempts.iter())
            .filter(|e| e.delivery == Delivery::MaybeProcessed)
            .count() as u32;
        let settled = attempts.last().is_some_and(|e| e.counts_as_success());
        match operation {
            Operation::Quote => lost,
            _ if lost > 0 && !settled => 1,
            _ => 0,
        }
    };
    let mut calls: std::collections::HashMap<(&str, &str), Vec<&Exchange>> =
        std::collections::HashMap::new();
    let mut total = 0;
    for exchange in exchanges.iter().filter(|e| e.operation == operation) {
        let key = (exchange.flow.as_str(), exchange.step.as_str());
        if exchange.attempt == 1
            && let Some(previous) = calls.remove(&key)
        {
            total += settle(&previous);
        }
        calls.entry(key).or_default().push(exchange);
    }
    total + calls.values().map(|attempts| settle(attempts)).sum::<u32>()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            }),
            outcome: crate::record::Outcome::Error,
            checks: Vec::new(),
            error: None,
            expectation: crate::record::Expectation::Acceptance,
            retried: false,
            delivery: match status {
                None => crate::record::Delivery::MaybeProcessed,
                Some(_) => crate::record::Delivery::Answered,
            },
            layout: None,
            reads: Vec::new(),
            token_fingerprint: None,
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
        reconciled.delivery = crate::record::Delivery::Reconciled;
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
                .map(|r| (r.operation, counted(r)))
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
}

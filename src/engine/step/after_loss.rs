//! What a success that follows a lost answer proves, said no further than it goes. An answer
//! the staging marks as a replay (`Idempotent-Replayed: true`, as Stripe and others send it)
//! says the lost attempt was the one that took effect. Without the mark, a retry that carried
//! the same idempotency key proves nothing by itself (a staging may ignore keys), nor whether
//! the lost attempt took effect: what settles it is that the write can take effect only once
//! (a booking number subscribed once, a contract claimed once, a flight reported once, a quote
//! deleted once, an update's quotes used once), so the staging holds one whichever attempt
//! made it. A quote has no such rule: the ledger counts each lost attempt apart as unconfirmed.

use crate::engine::caller::Pending;
use crate::models::Operation;
use crate::record::Check;

/// Response headers by which a staging marks an answer as the replay of an earlier request
/// with the same idempotency key.
const REPLAY_HEADERS: [&str; 2] = ["idempotent-replayed", "x-idempotent-replayed"];

/// The check a success after a lost answer carries; `keyed` says the write sends an
/// idempotency key.
pub(super) fn success_check(pending: &Pending, keyed: bool) -> Check {
    let op = pending.spec.operation;
    let status = pending.attempt.status().unwrap_or(0);
    let sent = if keyed {
        "retried with the same idempotency key"
    } else {
        "retried"
    };
    if replayed(pending) {
        return Check::pass(
            "reconciled",
            format!(
                "answer to an earlier attempt was lost; {sent}, and the staging marked its \
                 HTTP {status} a replay of that attempt: the {op} was made once; counted once"
            ),
        );
    }
    match once_only(op, if_match(pending)) {
        Some(rule) => Check::pass(
            "reconciled",
            format!(
                "answer to an earlier attempt was lost; {sent} and answered HTTP {status}, not \
                 marked a replay; {rule}: had both taken effect, this one would have been \
                 refused, so the staging holds one; counted once"
            ),
        ),
        // Not reconciled: nothing says whether the lost attempt made one too.
        None => Check::pass(
            "lost_attempt",
            format!(
                "answer to an earlier attempt was lost; {sent} and answered HTTP {status}, not \
                 marked a replay: this {op} is counted once, and each lost attempt apart as \
                 unconfirmed (the staging may have made a {op} for it)"
            ),
        ),
    }
}

/// Whether the answer marks itself as the replay of an earlier request.
fn replayed(pending: &Pending) -> bool {
    let Some(response) = pending.attempt.response.as_ref() else {
        return false;
    };
    REPLAY_HEADERS
        .iter()
        .filter_map(|name| response.header(name))
        .any(|value| value.trim().eq_ignore_ascii_case("true"))
}

fn if_match(pending: &Pending) -> bool {
    (pending.spec.headers.iter()).any(|(name, _)| name.eq_ignore_ascii_case("if-match"))
}

/// Why a second success of `op` would have been refused had the lost attempt taken effect;
/// `None` for a quote, which nothing makes unique.
fn once_only(op: Operation, if_match: bool) -> Option<&'static str> {
    Some(match op {
        Operation::Subscription => {
            "a booking number is subscribed once (a second subscription of it is a conflict)"
        }
        Operation::Claim => "a contract takes one claim (a second is a conflict)",
        Operation::Update if if_match => {
            "its If-Match would have gone stale had the lost attempt changed the booking (412)"
        }
        Operation::Update => "its quotes are used once (a second update with them is a conflict)",
        Operation::QuoteDeletion => "a quote is deleted once (a second deletion is a 404)",
        Operation::FlightCancellation => {
            "a flight is reported once (a second report is a conflict)"
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sentence for each write says what the ledger does with the lost attempt: only a
    /// quote's is counted apart (`evidence/ledger.rs`'s `settle`).
    #[test]
    fn only_a_quote_has_no_rule_that_makes_it_once() {
        for op in Operation::ALL.iter().copied().filter(|op| op.is_write()) {
            assert_eq!(
                once_only(op, false).is_none(),
                op == Operation::Quote,
                "{op}"
            );
        }
    }
}

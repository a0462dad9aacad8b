//! Where a write's confirmation reads and what one read showed, and the case of a write
//! answered `202 Accepted` that names nowhere to read its outcome (no `Location`, no
//! `Content-Location`) and has no `[endpoints.WRITE.confirm] read`. It is pending until
//! confirmed, like any 202: a subscription shows in its booking's contracts, read until they
//! are listed (as the step itself reads them); a claim's status is read by
//! its built-in confirmation; a quote deletion's is one of the answers the provider's docs
//! give a deletion (200, 202 or 204), and no read shows a deleted quote; any other write has
//! nothing that shows it and stays `unconfirmed`, with the check naming the 202 and the
//! setting that would confirm it.

use super::context::StepContext;
use crate::engine::caller::Pending;
use crate::models::Operation;
use crate::record::Check;

/// What one confirmation read showed.
pub(super) enum Shown {
    Confirmed(String),
    Failed(String),
    NotYet(String),
}

/// Where the confirmation reads.
pub(super) enum Target {
    /// A read endpoint of the API, built as its own calls are.
    Endpoint(Operation),
    /// A path under the API root, or a URL of the target's own origin.
    At(String),
    /// The booking's contracts, until they are listed: a subscription's 202 that names
    /// nowhere to read.
    Contracts,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Endpoint(op) => write!(f, "{op}"),
            Target::At(path) => write!(f, "GET {path}"),
            Target::Contracts => {
                write!(f, "read_contracts until the booking's contracts are listed")
            }
        }
    }
}

/// Where a 202 of `op` that names nowhere to read is confirmed: `Ok(None)` for a claim (its
/// built-in confirmation) and a quote deletion (a documented deletion answer), the booking's
/// contracts for a subscription, else why it cannot be.
pub(super) fn nowhere_named(op: Operation) -> Result<Option<Target>, String> {
    match op {
        Operation::Claim | Operation::QuoteDeletion => Ok(None),
        Operation::Subscription => Ok(Some(Target::Contracts)),
        _ => Err(format!(
            "answered HTTP 202 Accepted, naming no Location or Content-Location to read its \
             outcome: the {op} is pending and nothing confirms it; set \
             `[endpoints.{op}.confirm] read` to an endpoint or path that shows it"
        )),
    }
}

/// What a 202 of `op` that names nowhere to read and is taken as it is ([`nowhere_named`]'s
/// `Ok(None)`) carries: nothing for a claim, whose status its built-in confirmation reads
/// (`confirm_claim.rs`); for a deletion, the check saying why it counts.
pub(super) fn taken_as_it_is(op: Operation) -> Option<Check> {
    (op == Operation::QuoteDeletion).then(|| {
        Check::pass(
            "deletion_accepted",
            "HTTP 202 naming nowhere to read: counted as a deletion, one of the answers (200, \
             202, 204) the provider's docs give it; set `[endpoints.quote_deletion.confirm] \
             read` to confirm it by a read",
        )
    })
}

impl StepContext<'_> {
    /// Whether a contracts read lists the booking's contracts: its subscription took effect.
    pub(super) fn contracts_listed(&self, read: &Pending) -> Shown {
        let status = read.attempt.status();
        if !status.is_some_and(|s| (200..300).contains(&s)) {
            let answer = status.map_or_else(|| "no answer".to_string(), |s| format!("HTTP {s}"));
            return Shown::NotYet(answer);
        }
        let mut product_types: Vec<String> = (self.booking().product_types.iter())
            .map(|t| t.as_str().to_string())
            .collect();
        if product_types.is_empty() {
            product_types.push(crate::models::ProductType::Withdrawal.as_str().to_string());
        }
        if self.lists_contracts(read, &product_types) {
            Shown::Confirmed("the booking's contracts are listed".into())
        } else {
            Shown::NotYet("the booking's contracts are not listed yet".into())
        }
    }
}

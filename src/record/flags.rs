//! The two facts about an exchange that are not plain yes/no, as types: what it asked of the
//! server, and what is known of whether the server processed it. Written as the flags the
//! journal and evidence.json have always carried (`expected_error`, `maybe_processed`,
//! `reconciled`), each left out when false.

use serde::{Deserialize, Serialize};

/// What an exchange asked of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "bool", into = "bool")]
pub enum Expectation {
    /// A call of the batch: the server is to accept it, and its success counts.
    #[default]
    Acceptance,
    /// A negative check: success means the server refused as expected; never counted.
    Refusal,
}

impl Expectation {
    pub fn is_acceptance(&self) -> bool {
        *self == Expectation::Acceptance
    }
}

/// `expected_error` in the journal and evidence.json.
impl From<bool> for Expectation {
    fn from(expected_error: bool) -> Expectation {
        if expected_error {
            Expectation::Refusal
        } else {
            Expectation::Acceptance
        }
    }
}

impl From<Expectation> for bool {
    fn from(expectation: Expectation) -> bool {
        expectation == Expectation::Refusal
    }
}

/// Whether the server processed a request, beyond what its answer (if any) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "DeliveryFlags", into = "DeliveryFlags")]
pub(crate) enum Delivery {
    /// The answer says what happened.
    #[default]
    Answered,
    /// No usable answer arrived (a lost connection, a 5xx): it may have been processed.
    MaybeProcessed,
    /// A conflict after a lost answer, confirmed as this request's own earlier success.
    Reconciled,
}

/// [`Delivery`] as the journal and evidence.json have always written it: two flags, each
/// left out when false.
#[derive(Serialize, Deserialize)]
struct DeliveryFlags {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    maybe_processed: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    reconciled: bool,
}

impl From<DeliveryFlags> for Delivery {
    fn from(flags: DeliveryFlags) -> Delivery {
        match (flags.reconciled, flags.maybe_processed) {
            (true, _) => Delivery::Reconciled,
            (false, true) => Delivery::MaybeProcessed,
            (false, false) => Delivery::Answered,
        }
    }
}

impl From<Delivery> for DeliveryFlags {
    fn from(delivery: Delivery) -> DeliveryFlags {
        DeliveryFlags {
            maybe_processed: delivery == Delivery::MaybeProcessed,
            reconciled: delivery == Delivery::Reconciled,
        }
    }
}

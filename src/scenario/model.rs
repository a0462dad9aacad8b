//! What a scenario file says: the flows, their steps, the requirements, and the data to
//! generate. Plain types; reading and checking them is the parent's and `check.rs`'s.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::datagen::{DataProfile, Mutation};
use crate::models::{ClaimStatus, Operation};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub data: DataProfile,
    #[serde(default)]
    pub requirements: Vec<Requirement>,
    pub flows: Vec<FlowSpec>,
}

/// At least `required` successful exchanges of `operation`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub operation: Operation,
    pub required: u32,
    #[serde(default)]
    pub flight_sellers_only: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    #[serde(default = "one")]
    pub repeat: u32,
    #[serde(default)]
    pub flight_sellers_only: bool,
    pub steps: Vec<Step>,
}

fn one() -> u32 {
    1
}

/// One step of a flow; its outputs (quote ids, contract id, ...) feed the steps after it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// POST /quotes, one per flight plan.
    Quote,
    /// POST /subscriptions with the flow's open quotes.
    Subscribe,
    /// POST /quotes with the complete changed booking, then PATCH the subscription.
    Update {
        /// Which change; by default the flow's repeats cycle through all of them.
        #[serde(default)]
        mutation: Option<Mutation>,
    },
    /// GET the booking's contracts: contract id and claim status. The spec's two-step
    /// cancellation reads them before every claim; with `when_unknown = true` the read is
    /// skipped when the subscription's answer already gave the contract id (a body or a
    /// `Location` capture), which shortens the chain by a round trip.
    ReadContracts {
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        when_unknown: bool,
    },
    /// POST a claim on the booking's contract of `product_type` (default WITHDRAWAL).
    Claim {
        #[serde(default)]
        product_type: Option<crate::models::ProductType>,
    },
    /// Delete the flow's open quote.
    DeleteQuote,
    /// Report a cancellation of the booking's first flight.
    ReportFlightCancellation,
    /// Poll the contracts until the claim reaches `status`.
    AwaitClaimStatus {
        status: ClaimStatus,
        #[serde(default = "default_await_secs")]
        timeout_secs: u64,
        #[serde(default = "default_poll_ms")]
        interval_ms: u64,
    },
    /// A request the provider must refuse with `status` (a code, or "4xx").
    ExpectError {
        case: ErrorCase,
        status: ExpectedStatus,
    },
}

fn default_await_secs() -> u64 {
    60
}

fn default_poll_ms() -> u64 {
    500
}

/// The refusals the conformance scenario checks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCase {
    BadToken,
    MissingField,
    ReusedBookingNumber,
    ReusedQuoteReference,
    UnknownContract,
    UnknownBooking,
    PastDate,
}

impl ErrorCase {
    /// The name written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCase::BadToken => "bad_token",
            ErrorCase::MissingField => "missing_field",
            ErrorCase::ReusedBookingNumber => "reused_booking_number",
            ErrorCase::ReusedQuoteReference => "reused_quote_reference",
            ErrorCase::UnknownContract => "unknown_contract",
            ErrorCase::UnknownBooking => "unknown_booking",
            ErrorCase::PastDate => "past_date",
        }
    }
}

/// An expected status: an exact code, or a class such as "4xx".
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum ExpectedStatus {
    Code(u16),
    Class(String),
}

impl ExpectedStatus {
    pub fn matches(&self, status: u16) -> bool {
        match self {
            ExpectedStatus::Code(code) => *code == status,
            ExpectedStatus::Class(class) => {
                class.len() == 3
                    && class.ends_with("xx")
                    && class.as_bytes()[0] == b'0' + (status / 100) as u8
            }
        }
    }
}

impl fmt::Display for ExpectedStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpectedStatus::Code(code) => write!(f, "{code}"),
            ExpectedStatus::Class(class) => f.write_str(class),
        }
    }
}

impl Step {
    /// The name used in evidence and reports.
    pub fn name(&self) -> String {
        match self {
            Step::Quote => "quote".into(),
            Step::Subscribe => "subscribe".into(),
            Step::Update { .. } => "update".into(),
            Step::ReadContracts { .. } => "read_contracts".into(),
            Step::Claim { .. } => "claim".into(),
            Step::DeleteQuote => "delete_quote".into(),
            Step::ReportFlightCancellation => "report_flight_cancellation".into(),
            Step::AwaitClaimStatus { .. } => "await_claim_status".into(),
            Step::ExpectError { case, .. } => format!("expect_error:{}", case.as_str()),
        }
    }

    /// Steps that create or change contracts or claims: refused against production.
    /// The operations this step sends, in order (refusal cases included: a probe that the
    /// server should refuse still sends the write).
    pub fn operations(&self) -> Vec<Operation> {
        use Operation::*;
        match self {
            Step::Quote => vec![Quote],
            Step::Subscribe => vec![Subscription],
            Step::Update { .. } => vec![Quote, Update],
            Step::ReadContracts { .. } | Step::AwaitClaimStatus { .. } => vec![ReadContracts],
            Step::Claim { .. } => vec![Claim],
            Step::DeleteQuote => vec![QuoteDeletion],
            Step::ReportFlightCancellation => vec![FlightCancellation],
            Step::ExpectError { case, .. } => match case {
                ErrorCase::BadToken | ErrorCase::PastDate => vec![Quote],
                ErrorCase::MissingField
                | ErrorCase::ReusedBookingNumber
                | ErrorCase::ReusedQuoteReference => vec![Quote, Subscription],
                ErrorCase::UnknownContract => vec![Claim],
                ErrorCase::UnknownBooking => vec![Update],
            },
        }
    }
}

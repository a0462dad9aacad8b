//! The API's request and response bodies, product types, claim statuses and operations, spelled
//! exactly as the spec spells them; the crate root re-exports them all.

use serde::{Deserialize, Serialize};

/// Every request and (by default) every response body carries its payload under `data`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Envelope<T> {
    pub data: T,
}

/// The product types the spec names.
pub const WITHDRAWAL: &str = "WITHDRAWAL";
pub const CHANGE_FOR_ANY_REASON: &str = "CHANGE_FOR_ANY_REASON";

/// The product types the spec names, as a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ProductType {
    #[serde(rename = "WITHDRAWAL")]
    Withdrawal,
    #[serde(rename = "CHANGE_FOR_ANY_REASON")]
    ChangeForAnyReason,
}

impl ProductType {
    pub const ALL: [ProductType; 2] = [ProductType::Withdrawal, ProductType::ChangeForAnyReason];

    pub fn as_str(self) -> &'static str {
        match self {
            ProductType::Withdrawal => WITHDRAWAL,
            ProductType::ChangeForAnyReason => CHANGE_FOR_ANY_REASON,
        }
    }

    pub fn parse(name: &str) -> Option<ProductType> {
        ProductType::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// As the spec spells it, the way messages name it.
impl std::fmt::Display for ProductType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The only `ageRange` value the spec shows.
pub const ADULT: &str = "ADULT";

/// POST /quotes body (under `data`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct QuoteRequest {
    pub currency: String,
    pub trips: Vec<Trip>,
    /// Present on an update quote: the booking whose contract is being updated (docs/design.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking_number: Option<String>,
    /// Sandbox extension: ask for CHANGE_FOR_ANY_REASON cover besides WITHDRAWAL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_types: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Trip {
    pub price: Money,
    pub journeys: Vec<Journey>,
    pub travelers: Vec<QuoteTraveler>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Money {
    pub amount: f64,
    pub currency: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Journey {
    pub flights: Vec<Flight>,
}

/// A flight as the spec spells it; dates are kept as the exact strings sent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "camelCase")]
pub struct Flight {
    pub airline_iata: String,
    pub number: String,
    pub departure_airport_iata: String,
    pub arrival_airport_iata: String,
    pub departure_date: String,
    pub arrival_date: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct QuoteTraveler {
    pub age_range: String,
}

/// POST /subscriptions body (under `data`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionRequest {
    pub booking_number: String,
    pub quotes: Vec<QuoteSelection>,
    pub client: Client,
}

/// One quote used by a subscription, with the travelers it covers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct QuoteSelection {
    pub reference: String,
    pub travelers: Vec<Traveler>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Traveler {
    pub age_range: String,
    /// YYYY-MM-DD.
    pub birthdate: String,
    pub first_name: String,
    pub last_name: String,
}

/// The client (customer); note the lower-case `firstname`/`lastname`, unlike travelers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Client {
    pub email: String,
    pub firstname: String,
    pub lastname: String,
}

/// PATCH /subscriptions/{bookingNumber} body (under `data`): the update quote by `id`, plus the
/// client and travelers, sent even when unchanged. The spec does not show this payload; this is
/// the shape docs/design.md chose.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UpdateRequest {
    pub quotes: Vec<UpdateQuote>,
    pub client: Client,
    /// May be repeated but never changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub booking_number: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UpdateQuote {
    pub id: String,
    pub travelers: Vec<Traveler>,
}

/// POST /contracts/{contractId}/claims body (under `data`); `{}` is a valid WITHDRAWAL claim.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRequest {
    /// Type not fixed by the spec: a number or a numeric string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modification_cost: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_type: Option<String>,
    /// Staging only: postdates the claim (RFC 3339 date-time or YYYY-MM-DD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beneficiary: Option<Beneficiary>,
}

/// Refund beneficiary; its position in the claim is not shown by the spec (docs/design.md: `beneficiary`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Beneficiary {
    pub name: String,
    pub iban: String,
    pub bic: String,
}

/// POST /flight-cancellations body (under `data`), as docs/design.md's default template sends it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FlightCancellationReport {
    pub booking_number: String,
    pub airline_iata: String,
    pub number: String,
    pub departure_date: String,
}

/// The claim statuses of spec §3.
pub const CLAIM_STATUSES: [&str; 6] = [
    "MORE_INFO_NEEDED",
    "MANUAL_VERIFICATION_NEEDED",
    "ACCEPTED",
    "REFUNDABLE",
    "REFUNDED",
    "REJECTED",
];

/// A claim's status (spec §3). A server may name one the spec does not: it is kept as said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum ClaimStatus {
    MoreInfoNeeded,
    ManualVerificationNeeded,
    Accepted,
    Refundable,
    Refunded,
    Rejected,
    Other(String),
}

impl ClaimStatus {
    pub fn as_str(&self) -> &str {
        match self {
            ClaimStatus::MoreInfoNeeded => "MORE_INFO_NEEDED",
            ClaimStatus::ManualVerificationNeeded => "MANUAL_VERIFICATION_NEEDED",
            ClaimStatus::Accepted => "ACCEPTED",
            ClaimStatus::Refundable => "REFUNDABLE",
            ClaimStatus::Refunded => "REFUNDED",
            ClaimStatus::Rejected => "REJECTED",
            ClaimStatus::Other(other) => other,
        }
    }

    /// A status after which waiting for another is pointless.
    pub fn settled(&self) -> bool {
        matches!(
            self,
            ClaimStatus::Refunded | ClaimStatus::Rejected | ClaimStatus::ManualVerificationNeeded
        )
    }
}

impl From<String> for ClaimStatus {
    fn from(text: String) -> ClaimStatus {
        // A status word is read as the provider means it, whatever its case, padding or
        // separators: " manual verification needed " is the flag.
        let word: String = (text.trim().chars())
            .map(|c| match c {
                ' ' | '-' => '_',
                c => c.to_ascii_uppercase(),
            })
            .collect();
        match word.as_str() {
            "MORE_INFO_NEEDED" => ClaimStatus::MoreInfoNeeded,
            "MANUAL_VERIFICATION_NEEDED" => ClaimStatus::ManualVerificationNeeded,
            "ACCEPTED" => ClaimStatus::Accepted,
            "REFUNDABLE" => ClaimStatus::Refundable,
            "REFUNDED" => ClaimStatus::Refunded,
            "REJECTED" => ClaimStatus::Rejected,
            _ => ClaimStatus::Other(text),
        }
    }
}

impl From<ClaimStatus> for String {
    fn from(status: ClaimStatus) -> String {
        status.as_str().to_string()
    }
}

impl std::fmt::Display for ClaimStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error body the sandbox answers with (the spec does not show the real one).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorBody {
    pub error: ApiError,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ApiError {
    /// Machine-readable code, e.g. `INVALID_FIELD`, `CONFLICT`.
    pub code: String,
    pub message: String,
    /// JSON path of the offending field, when one field is to blame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// The operations whose successes the provider counts, plus the contract read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    Quote,
    Subscription,
    Update,
    QuoteDeletion,
    Claim,
    FlightCancellation,
    ReadContracts,
}

impl Operation {
    pub const ALL: [Operation; 7] = [
        Operation::Quote,
        Operation::Subscription,
        Operation::Update,
        Operation::QuoteDeletion,
        Operation::Claim,
        Operation::FlightCancellation,
        Operation::ReadContracts,
    ];

    /// The name used in evidence, config and scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Quote => "quote",
            Operation::Subscription => "subscription",
            Operation::Update => "update",
            Operation::QuoteDeletion => "quote_deletion",
            Operation::Claim => "claim",
            Operation::FlightCancellation => "flight_cancellation",
            Operation::ReadContracts => "read_contracts",
        }
    }

    pub fn parse(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|op| op.as_str() == name)
    }

    /// Whether the operation changes what the provider holds (a write) or only reads it.
    pub fn kind(self) -> OperationKind {
        match self {
            Operation::ReadContracts => OperationKind::Read,
            Operation::Quote
            | Operation::Subscription
            | Operation::Update
            | Operation::QuoteDeletion
            | Operation::Claim
            | Operation::FlightCancellation => OperationKind::Write,
        }
    }

    /// A write: sent once (again only to reconcile a lost answer), never polled.
    pub fn is_write(self) -> bool {
        self.kind() == OperationKind::Write
    }
}

/// What an operation does to the provider's records. A write is sent once and, where its
/// outcome is not in its answer, confirmed by reads; a read may be repeated at will.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OperationKind {
    Write,
    Read,
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_statuses_round_trip_as_the_spec_spells_them_and_keep_unknown_ones() {
        for name in CLAIM_STATUSES {
            let status = ClaimStatus::from(name.to_string());
            assert!(!matches!(status, ClaimStatus::Other(_)), "{name}");
            assert_eq!(serde_json::to_value(&status).unwrap(), name);
        }
        let unknown: ClaimStatus = serde_json::from_str("\"PAID_OUT\"").unwrap();
        assert_eq!(unknown, ClaimStatus::Other("PAID_OUT".into()));
        assert!(!unknown.settled());
        assert!(ClaimStatus::Rejected.settled() && !ClaimStatus::Accepted.settled());
    }

    #[test]
    fn status_words_are_read_whatever_their_case_and_padding() {
        for said in [
            " manual verification needed ",
            "Manual-Verification-Needed",
            "manual_verification_needed\n",
        ] {
            let status = ClaimStatus::from(said.to_string());
            assert_eq!(status, ClaimStatus::ManualVerificationNeeded, "{said:?}");
        }
        assert_eq!(
            ClaimStatus::from(" accepted".to_string()),
            ClaimStatus::Accepted
        );
    }
}

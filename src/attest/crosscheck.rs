//! What a provider can look up in its own logs: the identifiers its staging issued in a
//! bundle's answers and the certificate it presented. The signature says who vouches for a
//! bundle; only these, matched against the provider's records, say the exchanges happened.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::answer::{reading, tolerant};
use crate::journal::{self, Line};
use crate::models::{Operation, ProductType};
use crate::record::Exchange;

/// Answer headers whose values are the provider's own request or correlation ids.
const ID_HEADERS: [&str; 5] = [
    "x-request-id",
    "x-correlation-id",
    "request-id",
    "x-amzn-requestid",
    "traceresponse",
];

/// The reads (see [`crate::record::ValueRead`]) that name something the provider issued.
const CONTRACT_READ: &str = "contract_id";
const CLAIM_READ: &str = "claim_id";

/// The identifiers in a bundle the provider can match against its own records: each list
/// sorted, each value once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Issued {
    /// The bookings the provider accepted a call for (the partner generated the numbers; the
    /// provider's records hold them once accepted).
    pub booking_numbers: BTreeSet<String>,
    pub quotes: BTreeSet<QuoteIds>,
    pub contract_ids: BTreeSet<String>,
    pub claim_ids: BTreeSet<String>,
    /// The provider's request and correlation ids, by the (lowercase) answer header carrying
    /// them: `x-request-id`, `x-correlation-id`, `request-id`, `x-amzn-requestid`,
    /// `traceresponse`.
    pub answer_ids: BTreeMap<String, BTreeSet<String>>,
    /// The SHA-256 (hex) of each leaf certificate the server presented over TLS: none for
    /// plain HTTP.
    pub tls_certificate_sha256: BTreeSet<String>,
}

/// A quote as the provider issued it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct QuoteIds {
    pub id: String,
    pub reference: String,
}

impl Issued {
    /// Gathered from a bundle's journal, every exchange whole (the record computed again
    /// keeps them slim). A line that does not parse is passed over: `verify` names it, and the
    /// signer and the verifier pass it over alike.
    pub(crate) fn read(journal: impl std::io::BufRead) -> Issued {
        let mut issued = Issued::default();
        for line in journal.split(b'\n').map_while(Result::ok) {
            let Ok(text) = std::str::from_utf8(&line) else {
                continue;
            };
            if let Ok(Line::Exchange(exchange)) = journal::parse_line(text) {
                issued.exchange(&exchange);
            }
        }
        issued
    }

    fn exchange(&mut self, exchange: &Exchange) {
        let Some(response) = &exchange.response else {
            return;
        };
        if let Some(sha256) = &response.tls_certificate_sha256 {
            self.tls_certificate_sha256.insert(sha256.to_string());
        }
        for (name, value) in &response.headers {
            let name = name.to_ascii_lowercase();
            if ID_HEADERS.contains(&name.as_str()) && !value.is_empty() {
                let ids = self.answer_ids.entry(name).or_default();
                ids.insert(value.clone());
            }
        }
        if !exchange.counts_as_success() {
            return;
        }
        self.booking_numbers
            .extend(exchange.booking_number.iter().cloned());
        self.answer(exchange.operation, &response.body.to_value());
        let read = |name: &str| {
            let found = exchange.reads.iter().find(|read| read.name == name);
            found.and_then(|read| read.value.clone())
        };
        if let (Operation::Quote, Some(id), Some(reference)) =
            (exchange.operation, read("id"), read("reference"))
        {
            self.quotes.insert(QuoteIds { id, reference });
        }
        for read in &exchange.reads {
            let Some(value) = &read.value else { continue };
            match read.name.as_str() {
                CONTRACT_READ => self.contract_ids.insert(value.clone()),
                CLAIM_READ => self.claim_ids.insert(value.clone()),
                _ => continue,
            };
        }
    }

    /// The ids an accepted answer of `op` holds, read as `run` reads them when no capture is
    /// configured (a configured capture's value is among the exchange's reads).
    fn answer(&mut self, op: Operation, body: &Value) {
        let field = |name| tolerant::field(body, name).and_then(|(v, _)| reading::as_text(&v));
        match op {
            Operation::Quote => {
                if let (Some(id), Some(reference)) = (field("id"), field("reference")) {
                    self.quotes.insert(QuoteIds { id, reference });
                }
            }
            Operation::Claim => self.claim_ids.extend(field("id")),
            Operation::Subscription | Operation::Update | Operation::ReadContracts => {
                for product in ProductType::ALL {
                    let (contracts, _) = tolerant::contracts(body, product.as_str());
                    let ids = contracts.into_iter().filter_map(tolerant::contract_id);
                    self.contract_ids.extend(ids.map(|(id, _)| id));
                }
            }
            _ => {}
        }
    }
}

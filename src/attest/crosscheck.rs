//! What a provider can look up in its own logs: the identifiers its staging issued in a
//! bundle's answers and the certificate it presented. The signature says who vouches for a
//! bundle; only these, matched against the provider's records, say the exchanges happened.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::evidence::Evidence;
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
    /// The bookings the provider accepted a call for (ppcert generated the numbers; the
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
    /// Gathered from `derived`, a record computed again from its journal: its bookings and
    /// every exchange (read one at a time, wherever they are).
    pub(crate) fn of(derived: &Evidence) -> Issued {
        let mut issued = Issued::default();
        for booking in &derived.bookings {
            issued.booking_numbers.insert(booking.booking_number.clone());
            issued.contract_ids.extend(booking.contract_id.iter().cloned());
            issued.quotes.extend(booking.quotes.iter().map(|q| QuoteIds {
                id: q.id.clone(),
                reference: q.reference.clone(),
            }));
        }
        // The journal parsed when the record was derived; a line unread now is passed over as
        // both the signer and the verifier pass it over.
        let _ = derived.for_each_exchange(|exchange| {
            issued.exchange(exchange);
            Ok(())
        });
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
        for read in &exchange.reads {
            let Some(value) = &read.value else { continue };
            match read.name.as_str() {
                CONTRACT_READ => self.contract_ids.insert(value.clone()),
                CLAIM_READ => self.claim_ids.insert(value.clone()),
                _ => continue,
            };
        }
    }
}

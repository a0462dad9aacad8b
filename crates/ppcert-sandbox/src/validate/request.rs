//! The rules a request is held to on its own, before any state is consulted: exactly what the
//! sandbox refuses with 400 for its body. `ppcert proxy` holds a partner's traffic to the same
//! rules through this one entry point.

use chrono::{DateTime, Utc};

use super::fields::{
    ApiFailure, Checked, check_beneficiary, check_booking_number, check_client, check_traveler,
    parse_claim_date, parse_data, parse_modification_cost,
};
use super::quote::check_quote;
use crate::dialect::{ApiDialect, check_flight_status, parse_request};
use crate::models::{
    ClaimRequest, FlightCancellationReport, Operation, QuoteRequest, SubscriptionRequest, Traveler,
    UpdateRequest,
};

fn check_travelers<'a>(
    quotes: impl Iterator<Item = &'a [Traveler]>,
    now: DateTime<Utc>,
) -> Checked<()> {
    for (q, travelers) in quotes.enumerate() {
        for (t, traveler) in travelers.iter().enumerate() {
            let path = format!("data.quotes[{q}].travelers[{t}]");
            check_traveler(traveler, &path, now.fixed_offset())?;
        }
    }
    Ok(())
}

/// Checks `body` as the request of `operation` in `dialect`. `production`: the provider's
/// production refuses `claimDate`.
pub fn check_request(
    dialect: ApiDialect,
    operation: Operation,
    body: &[u8],
    now: DateTime<Utc>,
    production: bool,
) -> Checked<()> {
    match operation {
        Operation::Quote => {
            let quote: QuoteRequest = parse_data(body)?;
            if let Some(bn) = &quote.booking_number {
                check_booking_number(bn, "data.bookingNumber")?;
            }
            check_quote(&quote, now).map(|_| ())
        }
        Operation::Subscription => {
            let request: SubscriptionRequest = parse_request(dialect, body)?;
            check_booking_number(&request.booking_number, "data.bookingNumber")?;
            check_client(&request.client, "data.client")?;
            check_travelers(request.quotes.iter().map(|q| q.travelers.as_slice()), now)
        }
        Operation::Update => {
            let request: UpdateRequest = parse_request(dialect, body)?;
            check_client(&request.client, "data.client")?;
            check_travelers(request.quotes.iter().map(|q| q.travelers.as_slice()), now)
        }
        Operation::Claim => {
            let request: ClaimRequest = parse_data(body)?;
            if let Some(beneficiary) = &request.beneficiary {
                check_beneficiary(beneficiary)?;
            }
            if let Some(cost) = &request.modification_cost {
                parse_modification_cost(cost)?;
            }
            match &request.claim_date {
                Some(_) if production => Err(ApiFailure::field(
                    "data.claimDate",
                    "CLAIM_DATE_UNAVAILABLE",
                    "claimDate is unavailable in production",
                )),
                Some(date) => parse_claim_date(date).map(|_| ()),
                None => Ok(()),
            }
        }
        Operation::FlightCancellation => match dialect {
            ApiDialect::Spec => {
                let report: FlightCancellationReport = parse_data(body)?;
                check_booking_number(&report.booking_number, "data.bookingNumber")
            }
            ApiDialect::ProviderDocs => check_flight_status(body),
        },
        Operation::QuoteDeletion | Operation::ReadContracts => Ok(()),
    }
}

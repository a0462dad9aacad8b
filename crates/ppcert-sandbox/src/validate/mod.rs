//! Request parsing and the spec's rules, each failure naming the offending field: the field
//! rules and the refusal type in `fields.rs`, a quote's rules in `quote.rs`, a whole request's
//! in `request.rs`. `ppcert proxy` holds a partner's traffic to them through [`check_request`].

mod fields;
mod quote;
mod request;

pub use fields::{
    ApiFailure, Checked, check_age_range, check_beneficiary, check_booking_number, check_client,
    check_currency, check_traveler, is_airline_code, is_airport_code, is_bic, is_flight_number,
    parse_claim_date, parse_data, parse_date, parse_datetime, parse_modification_cost,
    parse_parsed_data,
};
pub use quote::{QuoteFacts, TRIP_PRICE_RANGE, check_quote};
pub use request::{check_parsed_request, check_request};

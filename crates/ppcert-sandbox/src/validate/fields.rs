//! Request parsing and the spec's field rules, each failure naming the offending field: what
//! `quote.rs`, `request.rs` and the dialects build on.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use serde::de::DeserializeOwned;

use crate::models::{ADULT, ApiError, Beneficiary, Client, ErrorBody, Traveler};

/// A refusal: status, machine code, message and (when one field is to blame) its path.
#[derive(Debug, Clone)]
pub struct ApiFailure {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub field: Option<String>,
}

impl ApiFailure {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiFailure {
            status,
            code,
            message: message.into(),
            field: None,
        }
    }

    /// A 400 blaming one field.
    pub fn field(field: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        ApiFailure {
            status: StatusCode::BAD_REQUEST,
            code,
            message: message.into(),
            field: Some(field.into()),
        }
    }

    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::field(field, "INVALID_FIELD", message)
    }
}

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ApiError {
                code: self.code.to_string(),
                message: self.message,
                field: self.field,
            },
        };
        (self.status, axum::Json(body)).into_response()
    }
}

pub type Checked<T> = Result<T, ApiFailure>;

/// Parses `{"data": {...}}` into `T`, naming the exact path of a missing or mistyped field.
pub fn parse_data<T: DeserializeOwned>(body: &[u8]) -> Checked<T> {
    let value: serde_json::Value = serde_json::from_slice(body).map_err(not_json)?;
    let data = match value {
        serde_json::Value::Object(mut map) => map.remove("data"),
        _ => None,
    };
    let data = match data {
        Some(data @ serde_json::Value::Object(_)) => data,
        Some(_) => return Err(not_an_object()),
        None => return Err(no_data()),
    };
    serde_path_to_error::deserialize(data).map_err(data_failure)
}

/// [`parse_data`] of a body already parsed (`body` is `serde_json::from_slice` of its bytes):
/// the same refusals in the same words, without parsing it again. `T` is read from the value
/// in place, so a large field that `T` does not name is skipped, never copied.
pub fn parse_parsed_data<T: DeserializeOwned>(body: &serde_json::Value) -> Checked<T> {
    let data = match body.get("data") {
        Some(data @ serde_json::Value::Object(_)) => data,
        Some(_) => return Err(not_an_object()),
        None => return Err(no_data()),
    };
    serde_path_to_error::deserialize(data).map_err(data_failure)
}

/// The refusal of a body that is not JSON.
pub(crate) fn not_json(e: serde_json::Error) -> ApiFailure {
    ApiFailure::new(
        StatusCode::BAD_REQUEST,
        "INVALID_JSON",
        format!("body is not valid JSON: {e}"),
    )
}

fn not_an_object() -> ApiFailure {
    ApiFailure::invalid("data", "`data` must be an object")
}

fn no_data() -> ApiFailure {
    ApiFailure::invalid("data", "missing field `data`")
}

/// A field of `data` missing or mistyped, by its whole path.
fn data_failure(err: serde_path_to_error::Error<serde_json::Error>) -> ApiFailure {
    let path = err.path().to_string();
    let message = err.inner().to_string();
    let mut field = if path == "." {
        "data".to_string()
    } else {
        format!("data.{path}")
    };
    if let Some(missing) = missing_field_name(&message) {
        field = format!("{field}.{missing}");
    }
    ApiFailure::invalid(field, message)
}

fn missing_field_name(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next()
}

/// ISO 8601 date-time with an explicit UTC offset (`Z` or `±hh:mm`); a naive time is refused.
pub fn parse_datetime(value: &str, field: &str) -> Checked<DateTime<FixedOffset>> {
    DateTime::parse_from_rfc3339(value).map_err(|_| {
        ApiFailure::invalid(
            field,
            format!("`{value}` is not an ISO 8601 date-time with a UTC offset"),
        )
    })
}

pub fn parse_date(value: &str, field: &str) -> Checked<NaiveDate> {
    NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .map_err(|_| ApiFailure::invalid(field, format!("`{value}` is not a YYYY-MM-DD date")))
}

fn is_upper_alnum(value: &str, len: usize) -> bool {
    value.len() == len
        && value
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

pub fn is_airport_code(value: &str) -> bool {
    value.len() == 3 && value.bytes().all(|b| b.is_ascii_uppercase())
}

pub fn is_airline_code(value: &str) -> bool {
    is_upper_alnum(value, 2) && value.bytes().any(|b| b.is_ascii_uppercase())
}

/// 1–4 digits, optionally one operational suffix letter.
pub fn is_flight_number(value: &str) -> bool {
    let digits = value.trim_end_matches(|c: char| c.is_ascii_uppercase());
    (1..=4).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && value.len() - digits.len() <= 1
}

/// Every active ISO 4217 code is accepted (the models' maintained list); nothing else.
pub fn check_currency(value: &str, field: &str) -> Checked<()> {
    if crate::models::money::is_currency(value) {
        Ok(())
    } else {
        Err(ApiFailure::invalid(
            field,
            format!("`{value}` is not a known ISO 4217 currency code"),
        ))
    }
}

pub fn check_age_range(value: &str, field: &str) -> Checked<()> {
    if value == ADULT {
        Ok(())
    } else {
        Err(ApiFailure::invalid(
            field,
            format!("ageRange `{value}` is not accepted: the spec shows only ADULT"),
        ))
    }
}

pub fn check_client(client: &Client, path: &str) -> Checked<()> {
    check_email(&client.email, &format!("{path}.email"))?;
    check_name(&client.firstname, &format!("{path}.firstname"))?;
    check_name(&client.lastname, &format!("{path}.lastname"))
}

fn check_email(value: &str, field: &str) -> Checked<()> {
    let valid = match value.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !value.contains(char::is_whitespace)
                && !domain.contains('@')
        }
        None => false,
    };
    if valid {
        Ok(())
    } else {
        Err(ApiFailure::invalid(
            field,
            format!("`{value}` is not an e-mail address"),
        ))
    }
}

fn check_name(value: &str, field: &str) -> Checked<()> {
    if value.trim().is_empty() || value.chars().count() > 100 {
        Err(ApiFailure::invalid(
            field,
            "must be a non-empty name of at most 100 characters",
        ))
    } else {
        Ok(())
    }
}

/// A traveler of a subscription or update; an ADULT must be 18 or older at departure.
pub fn check_traveler(
    traveler: &Traveler,
    path: &str,
    departure: DateTime<FixedOffset>,
) -> Checked<()> {
    check_age_range(&traveler.age_range, &format!("{path}.ageRange"))?;
    check_name(&traveler.first_name, &format!("{path}.firstName"))?;
    check_name(&traveler.last_name, &format!("{path}.lastName"))?;
    let field = format!("{path}.birthdate");
    let birthdate = parse_date(&traveler.birthdate, &field)?;
    let on_departure = departure.date_naive();
    let age = on_departure.years_since(birthdate);
    match age {
        Some(age) if (18..=120).contains(&age) => Ok(()),
        _ => Err(ApiFailure::invalid(
            field,
            "an ADULT traveler must be between 18 and 120 years old at departure",
        )),
    }
}

/// Booking numbers travel in URL paths, so only path-safe characters are accepted.
pub fn check_booking_number(value: &str, field: &str) -> Checked<()> {
    let valid = (1..=64).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(ApiFailure::invalid(
            field,
            "bookingNumber must be 1-64 characters of A-Z, a-z, 0-9, '-' or '_'",
        ))
    }
}

pub fn check_beneficiary(beneficiary: &Beneficiary) -> Checked<()> {
    check_name(&beneficiary.name, "data.beneficiary.name")?;
    if beneficiary.iban.parse::<iban::Iban>().is_err() {
        return Err(ApiFailure::invalid(
            "data.beneficiary.iban",
            "not a valid IBAN (format or check digits)",
        ));
    }
    if !is_bic(&beneficiary.bic) {
        return Err(ApiFailure::invalid(
            "data.beneficiary.bic",
            "not a valid BIC (8 or 11 characters)",
        ));
    }
    Ok(())
}

/// ISO 9362: bank (4 letters), country (2 letters), location (2), optional branch (3).
pub fn is_bic(value: &str) -> bool {
    let b = value.as_bytes();
    (b.len() == 8 || b.len() == 11)
        && b[..6].iter().all(u8::is_ascii_uppercase)
        && b[6..]
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// `modificationCost`: a positive number or numeric string (the spec does not fix its type).
pub fn parse_modification_cost(value: &serde_json::Value) -> Checked<f64> {
    let cost = match value {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    match cost {
        Some(cost) if cost > 0.0 && cost.is_finite() => Ok(cost),
        _ => Err(ApiFailure::invalid(
            "data.modificationCost",
            "modificationCost must be a positive number",
        )),
    }
}

/// `claimDate`: an RFC 3339 date-time, or a date taken as midnight UTC.
pub fn parse_claim_date(value: &str) -> Checked<DateTime<Utc>> {
    if let Ok(at) = DateTime::parse_from_rfc3339(value) {
        return Ok(at.with_timezone(&Utc));
    }
    let date = parse_date(value, "data.claimDate").map_err(|_| {
        ApiFailure::invalid(
            "data.claimDate",
            format!("`{value}` is neither an ISO 8601 date-time with offset nor a date"),
        )
    })?;
    Ok(date
        .and_hms_opt(0, 0, 0)
        .expect("midnight exists")
        .and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flight_numbers_are_one_to_four_digits() {
        for ok in ["1", "12", "1234", "123A"] {
            assert!(is_flight_number(ok), "{ok}");
        }
        for bad in ["", "12345", "A12", "12AB", "1 2"] {
            assert!(!is_flight_number(bad), "{bad}");
        }
    }

    #[test]
    fn airline_codes_may_hold_one_digit() {
        assert!(is_airline_code("U2"));
        assert!(is_airline_code("AF"));
        assert!(!is_airline_code("22"));
        assert!(!is_airline_code("af"));
        assert!(!is_airline_code("AFR"));
    }

    #[test]
    fn bic_shapes() {
        assert!(is_bic("DEUTDEFF"));
        assert!(is_bic("DEUTDEFF500"));
        assert!(!is_bic("DEUTDEF"));
        assert!(!is_bic("1EUTDEFF"));
    }

    #[test]
    fn missing_field_path_is_complete() {
        let err = parse_data::<crate::models::Client>(
            br#"{"data":{"email":"a@example.com","firstname":"A"}}"#,
        )
        .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("data.lastname"));
    }
}

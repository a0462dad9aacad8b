//! How a real staging may differ from the spec in the way it is called, beyond request and
//! answer shapes: routes served only with a trailing slash (the bare path is redirected, as
//! Django and Starlette do), date-times taken only as UTC instants (`...Z`), and the
//! flight-cancellation report as `PUT /bookings/{bookingNumber}/flight-status`. Each is off by
//! default; what the sandbox saw of them is counted, so a test can tell that a client met them.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes, to_bytes};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;

use crate::models::FlightCancellationReport;
use crate::shared::Shared;
use crate::validate::{ApiFailure, Checked, parse_data};

pub(crate) mod seen;

use seen::bump;
pub use seen::{FLIGHT_STATUS_PATH, Quirks, QuirksSeen};

/// Wraps the whole app so that the slash is dealt with before routing: with
/// [`Quirks::trailing_slash`], a slashed API path is routed without its slash and a bare one
/// is redirected. Every request is counted for [`QuirksSeen::gzip_accepted`].
pub(crate) fn around(app: Router, shared: Arc<Shared>) -> Router {
    Router::new()
        .fallback_service(app)
        .layer(axum::middleware::from_fn_with_state(shared, slashes))
}

async fn slashes(State(shared): State<Arc<Shared>>, mut request: Request, next: Next) -> Response {
    let counters = &shared.quirks_seen;
    let gzip = request
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(super::transport::accepts_gzip);
    if gzip {
        bump(&counters.gzip_accepted);
    }
    let path = request.uri().path().to_string();
    if !shared.options.quirks.trailing_slash || !is_api_path(&shared, &path) {
        return next.run(request).await;
    }
    let query = request
        .uri()
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    let Some(bare) = path.strip_suffix('/') else {
        bump(&counters.redirected);
        let location = format!("{path}/{query}");
        let mut answer = StatusCode::PERMANENT_REDIRECT.into_response();
        if let Ok(value) = HeaderValue::from_str(&location) {
            answer.headers_mut().insert(header::LOCATION, value);
        }
        return answer;
    };
    bump(&counters.slashed);
    if let Ok(uri) = format!("{bare}{query}").parse::<Uri>() {
        *request.uri_mut() = uri;
    }
    next.run(request).await
}

/// An API route's path: under the prefix, not the root, not the document or the token endpoint.
fn is_api_path(shared: &Shared, path: &str) -> bool {
    let prefix = shared.options.api_prefix();
    match path.strip_prefix(prefix) {
        Some(rest) => rest.len() > 1 && rest.starts_with('/') && !is_root_endpoint(path),
        None => false,
    }
}

fn is_root_endpoint(path: &str) -> bool {
    matches!(path.trim_end_matches('/'), "/openapi.json" | "/oauth/token")
}

/// With [`Quirks::utc_only`], refuses a body holding a date-time that is not a `Z` instant.
pub(crate) async fn utc_only(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    if !shared.options.quirks.utc_only {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, shared.options.limits.max_body).await else {
        return ApiFailure::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "BODY_TOO_LARGE",
            "the request body is too large",
        )
        .into_response();
    };
    if let Ok(value) = serde_json::from_slice::<Value>(&bytes)
        && let Some((field, text)) = first_not_utc(&value, "")
    {
        bump(&shared.quirks_seen.not_utc);
        let message = format!(
            "`{text}` is not a UTC instant: this API takes date-times in UTC, ending in `Z` (e.g. `2027-03-14T07:30:00Z`)"
        );
        return ApiFailure::invalid(field, message).into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The first string in `value` that is a date-time but not a UTC instant, with its field
/// path (`data.trips[0].journeys[0].flights[0].departureDate`).
fn first_not_utc(value: &Value, path: &str) -> Option<(String, String)> {
    match value {
        Value::String(text) if looks_like_date_time(text) && !is_utc_instant(text) => {
            Some((path.to_string(), text.clone()))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| first_not_utc(item, &format!("{path}[{i}]"))),
        Value::Object(fields) => fields.iter().find_map(|(name, item)| {
            let path = match path {
                "" => name.clone(),
                _ => format!("{path}.{name}"),
            };
            first_not_utc(item, &path)
        }),
        _ => None,
    }
}

/// `YYYY-MM-DDT...`: a date with a time, whatever follows.
fn looks_like_date_time(text: &str) -> bool {
    let date = text.get(..10).unwrap_or_default();
    chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok()
        && matches!(text.as_bytes().get(10), Some(b'T' | b't'))
}

fn is_utc_instant(text: &str) -> bool {
    (text.ends_with('Z') || text.ends_with('z'))
        && chrono::DateTime::parse_from_rfc3339(text).is_ok()
}

/// The body of `PUT /bookings/{bookingNumber}/flight-status`, under `data`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FlightStatus {
    airline_iata: String,
    number: String,
    departure_date: String,
    status: String,
}

/// `PUT /bookings/{bookingNumber}/flight-status`: the spec's report, by another call.
pub(crate) async fn report_flight_status(
    State(shared): State<Arc<Shared>>,
    Path(booking_number): Path<String>,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    bump(&shared.quirks_seen.flight_status_puts);
    let status: FlightStatus = parse_data(&body)?;
    cancelled(&status.status)?;
    let report = FlightCancellationReport {
        booking_number,
        airline_iata: status.airline_iata,
        number: status.number,
        departure_date: status.departure_date,
    };
    let recorded = shared.store().report_flight_cancellation(report)?;
    Ok(super::handlers::reply(
        &shared.options.layout,
        StatusCode::OK,
        recorded,
    ))
}

fn cancelled(status: &str) -> Checked<()> {
    match status {
        "CANCELLED" => Ok(()),
        _ => Err(ApiFailure::invalid(
            "data.status",
            format!("`{status}` is not a status this call takes: only \"CANCELLED\""),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_z_instants_pass() {
        let body = json!({"data": {"trips": [{"journeys": [{"flights": [
            {"departureDate": "2027-03-14T07:30:00Z", "arrivalDate": "2027-03-14T11:30:00+02:00"}
        ]}]}], "birthdate": "1990-01-01"}});
        assert_eq!(
            first_not_utc(&body, ""),
            Some((
                "data.trips[0].journeys[0].flights[0].arrivalDate".into(),
                "2027-03-14T11:30:00+02:00".into()
            ))
        );
        let broken = json!({"data": {"at": "2027-03-14T07:30:00Z", "when": "2027-03-14T7h"}});
        assert_eq!(
            first_not_utc(&broken, ""),
            Some(("data.when".into(), "2027-03-14T7h".into()))
        );
        let fine = json!({"data": {"at": "2027-03-14T07:30:00.123Z", "day": "2027-03-14", "n": 1}});
        assert_eq!(first_not_utc(&fine, ""), None);
        assert!(!is_utc_instant("2027-03-14T07:30:00"));
        assert!(!is_utc_instant("2027-03-14T07:30:00+00:00"));
    }

    #[test]
    fn only_cancelled_is_reported() {
        assert!(cancelled("CANCELLED").is_ok());
        assert_eq!(
            cancelled("Canceled").unwrap_err().field.as_deref(),
            Some("data.status")
        );
    }
}

//! Claims (the 24 h rule, claimDate, status over time) and flight-cancellation reports.

use chrono::{DateTime, Duration, FixedOffset, Utc};
use serde_json::{Value, json};

use super::model::{Claim, FRAUD_WINDOW_HOURS, Rules, Store, conflict, not_found};
use crate::models::{CHANGE_FOR_ANY_REASON, ClaimRequest, FlightCancellationReport, Operation};
use crate::validate::{self, ApiFailure, Checked, check_beneficiary};

impl Store {
    pub fn claim(
        &mut self,
        contract_id: &str,
        request: ClaimRequest,
        now: DateTime<Utc>,
        rules: Rules,
    ) -> Checked<Value> {
        let contract = self
            .contracts
            .get(contract_id)
            .ok_or_else(|| not_found(format!("no contract with id `{contract_id}`")))?;
        if contract.claim.is_some() {
            return Err(conflict(format!(
                "contract `{contract_id}` already has a claim"
            )));
        }
        let modification_cost = check_claim_product(&contract.product_type, &request)?;
        if let Some(beneficiary) = &request.beneficiary {
            check_beneficiary(beneficiary)?;
        }
        let booking = &self.bookings[&contract.booking_number];
        let claim_date = match &request.claim_date {
            Some(_) if rules.production => {
                return Err(ApiFailure::field(
                    "data.claimDate",
                    "CLAIM_DATE_UNAVAILABLE",
                    "claimDate is unavailable in production",
                ));
            }
            Some(value) => {
                let at = validate::parse_claim_date(value)?;
                if at < booking.created_at {
                    return Err(ApiFailure::invalid(
                        "data.claimDate",
                        "claimDate may only postdate the claim, not precede the subscription",
                    ));
                }
                Some(at)
            }
            None => None,
        };
        let effective = claim_date.unwrap_or(now).max(now);
        let flagged = effective - booking.created_at < Duration::hours(FRAUD_WINDOW_HOURS);
        let claim = Claim {
            id: self.new_id("cl_"),
            created_at: now,
            claim_date,
            flagged,
            bank_details: request.beneficiary.is_some(),
            modification_cost,
        };
        let mut value = claim_json(&claim, contract_id, now, rules);
        if rules.claims_decided_after.is_some()
            && let Some(answer) = value.as_object_mut()
        {
            // Decided later: the answer says the claim was received, not what became of it.
            answer.remove("status");
        }
        self.announce_claim(contract_id, &claim, rules);
        self.contracts.get_mut(contract_id).expect("checked").claim = Some(claim);
        self.count(Operation::Claim);
        Ok(value)
    }

    pub fn report_flight_cancellation(
        &mut self,
        report: FlightCancellationReport,
    ) -> Checked<Value> {
        validate::check_booking_number(&report.booking_number, "data.bookingNumber")?;
        let wanted = flight_departure(&report.departure_date)?;
        let booking = self.bookings.get(&report.booking_number).ok_or_else(|| {
            not_found(format!(
                "no contract for booking number `{}`",
                report.booking_number
            ))
        })?;
        let index = booking
            .flights
            .iter()
            .position(|f| {
                f.airline_iata == report.airline_iata
                    && f.number == report.number
                    && wanted.matches(&f.departure_date)
            })
            .ok_or_else(|| not_found("no contract of this booking covers that flight"))?;
        if !self
            .reported_flights
            .insert((report.booking_number.clone(), index))
        {
            return Err(conflict("this flight cancellation was already reported"));
        }
        let id = self.new_id("fc_");
        self.count(Operation::FlightCancellation);
        Ok(
            json!({"id": id, "bookingNumber": report.booking_number, "airlineIata": report.airline_iata, "number": report.number, "status": "RECORDED"}),
        )
    }
}

impl Store {
    /// The provider's documented report: every contract covering the flight is affected.
    pub fn report_flight_status(
        &mut self,
        airline: &str,
        number: &str,
        local_date: chrono::NaiveDate,
        origin: &str,
    ) -> Checked<Value> {
        let wanted = DepartureMatch::Date(local_date);
        let covered: Vec<(String, usize)> = self
            .bookings
            .iter()
            .filter_map(|(number_of_booking, booking)| {
                let index = booking.flights.iter().position(|f| {
                    f.airline_iata == airline
                        && f.number == number
                        && f.departure_airport_iata == origin
                        && wanted.matches(&f.departure_date)
                })?;
                Some((number_of_booking.clone(), index))
            })
            .collect();
        if covered.is_empty() {
            return Err(not_found(format!(
                "no contract covers flight {airline}{number} from {origin} on {local_date}"
            )));
        }
        if covered
            .iter()
            .all(|key| self.reported_flights.contains(key))
        {
            return Err(conflict("this flight's cancellation was already reported"));
        }
        self.reported_flights.extend(covered);
        let id = self.new_id("fc_");
        self.count(Operation::FlightCancellation);
        Ok(json!({"id": id, "airlineIata": airline, "number": number,
            "localDepartureDate": local_date.to_string(), "departureAirportIata": origin,
            "status": "Canceled"}))
    }
}

enum DepartureMatch {
    Instant(DateTime<FixedOffset>),
    Date(chrono::NaiveDate),
}

impl DepartureMatch {
    fn matches(&self, departure: &str) -> bool {
        let Ok(at) = DateTime::parse_from_rfc3339(departure) else {
            return false;
        };
        match self {
            DepartureMatch::Instant(wanted) => at == *wanted,
            DepartureMatch::Date(date) => at.date_naive() == *date,
        }
    }
}

fn flight_departure(value: &str) -> Checked<DepartureMatch> {
    if let Ok(at) = DateTime::parse_from_rfc3339(value) {
        return Ok(DepartureMatch::Instant(at));
    }
    validate::parse_date(value, "data.departureDate").map(DepartureMatch::Date)
}

/// CHANGE_FOR_ANY_REASON needs `modificationCost` and `productType`; WITHDRAWAL needs nothing.
fn check_claim_product(contract_type: &str, request: &ClaimRequest) -> Checked<Option<f64>> {
    if let Some(given) = &request.product_type
        && given != contract_type
    {
        return Err(ApiFailure::invalid(
            "data.productType",
            format!("productType `{given}` does not match the contract's `{contract_type}`"),
        ));
    }
    if contract_type != CHANGE_FOR_ANY_REASON {
        return Ok(None);
    }
    if request.product_type.is_none() {
        return Err(ApiFailure::invalid(
            "data.productType",
            "missing field `productType` (required for CHANGE_FOR_ANY_REASON)",
        ));
    }
    let cost = request.modification_cost.as_ref().ok_or_else(|| {
        ApiFailure::invalid(
            "data.modificationCost",
            "missing field `modificationCost` (required for CHANGE_FOR_ANY_REASON)",
        )
    })?;
    validate::parse_modification_cost(cost).map(Some)
}

/// The claim's status now: the last its timeline has reached.
fn claim_status(claim: &Claim, now: DateTime<Utc>, rules: Rules) -> &'static str {
    let elapsed = now - claim.created_at;
    super::events::claim_timeline(claim, rules)
        .into_iter()
        .rev()
        .find(|(after, _)| elapsed >= *after)
        .map_or("ACCEPTED", |(_, status)| status)
}

pub(super) fn claim_json(
    claim: &Claim,
    contract_id: &str,
    now: DateTime<Utc>,
    rules: Rules,
) -> Value {
    let mut value = json!({
        "id": claim.id,
        "contractId": contract_id,
        "createdAt": claim.created_at.to_rfc3339(),
    });
    let undecided = rules
        .claims_decided_after
        .is_some_and(|after| now - claim.created_at < after);
    if !undecided {
        value["status"] = json!(claim_status(claim, now, rules));
    }
    if let Some(at) = claim.claim_date {
        value["claimDate"] = json!(at.to_rfc3339());
    }
    if let Some(cost) = claim.modification_cost {
        value["modificationCost"] = json!(cost);
    }
    value
}

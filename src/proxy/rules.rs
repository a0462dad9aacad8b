//! What `ppcert proxy` holds a partner's request to: the spec's rules for its body (the
//! sandbox's own validators, in the dialect in force) and the sequencing rules only a record of
//! the session can tell (a booking number subscribed twice, an update without a fresh update
//! quote, a claim within 24 h of its subscription without `claimDate`, several flight plans in
//! one quote). It learns bookings, quotes and contracts from the answers it sees.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::json::{contract_ids, field_paths, find, has_path, text};
use super::routes::Recognised;
use super::sequencing::NOT_REUSED;
use super::sequencing::{Known, claim_timing, fresh_update_quote, one_flight_plan};
use super::wire::{self, Configured};
use crate::environment::Environment;
use crate::models::Operation;
use crate::record::Check;
use crate::sandbox::ApiDialect;
use crate::sandbox::validate::{check_parsed_request, check_request};

pub(crate) const SPEC_RULES: &str = "request follows the spec's rules";
pub(crate) struct Rules {
    dialect: ApiDialect,
    environment: Environment,
    known: Mutex<Known>,
    /// Per operation, the fields the configured body template sends (sample rendering).
    configured_fields: HashMap<Operation, Vec<String>>,
    /// Per operation whose configured body or media type is not the spec's JSON: what it sends.
    configured_wire: HashMap<Operation, Configured>,
}

pub(crate) const CONFIGURED_SHAPE: &str = "request has the configured definition's fields";

/// The sandbox's validators hold a body to the spec's stated rules and to choices of the
/// sandbox's own; only the first may fail a partner. Missing fields, wrong types, malformed
/// JSON, past dates and `claimDate` in production are the spec's; a closed list or format the
/// spec does not state is only a warning.
fn spec_rules(result: Result<(), crate::sandbox::validate::ApiFailure>) -> Check {
    let Err(failure) = result else {
        return Check::pass(SPEC_RULES, "every field as the spec and the dialect say");
    };
    let detail = format!(
        "$.{}: {} ({})",
        failure.field.as_deref().unwrap_or("data"),
        failure.message,
        failure.code
    );
    let message = failure.message.as_str();
    let stated = matches!(
        failure.code,
        "INVALID_JSON" | "PAST_DATE" | "CLAIM_DATE_UNAVAILABLE"
    ) || [
        "missing field",
        "invalid type",
        "invalid value",
        "`data` must be",
    ]
    .iter()
    .any(|start| message.starts_with(start))
        || message.contains("is not a YYYY-MM-DD date")
        || message.contains("is not an ISO 8601 date-time");
    if stated {
        Check::fail(SPEC_RULES, detail)
    } else {
        Check::fail(
            SPEC_RULES,
            format!("{detail}; ppcert's sandbox refuses this, but the spec states no such rule: not failed"),
        )
        .warning()
    }
}

/// A request's verdict before it is forwarded: the booking it concerns and every check made.
pub(crate) struct Judged {
    pub booking: Option<String>,
    pub checks: Vec<Check>,
    /// The spec's view of the body ([`wire::parsed_view`]), parsed once for the checks and kept for
    /// what the answer teaches ([`Rules::learn`]).
    pub view: std::sync::Arc<Value>,
}

fn path_value(recognised: &Recognised, part: &str) -> Option<String> {
    recognised
        .values
        .iter()
        .find(|(name, _)| name.to_lowercase().contains(part))
        .map(|(_, value)| value.clone())
}

impl Rules {
    /// The environment the session's target is.
    pub(crate) fn environment(&self) -> Environment {
        self.environment
    }

    pub(crate) fn new(dialect: ApiDialect, environment: Environment) -> Rules {
        Rules {
            dialect,
            environment,
            known: Mutex::new(Known::default()),
            configured_fields: HashMap::new(),
            configured_wire: HashMap::new(),
        }
    }

    /// Holds the calls the spec does not show to the body their definition in force sends.
    pub(crate) fn with_definitions(mut self, endpoints: &crate::endpoints::Endpoints) -> Rules {
        self.configured_wire = wire::configured(endpoints);
        for op in [Operation::QuoteDeletion, Operation::FlightCancellation] {
            let (context, default) = crate::endpoints::context::sample(op);
            let rendered = endpoints.body(op, &context, default);
            if let Some(body) = rendered.ok().flatten().as_ref().and_then(|b| b.json()) {
                let mut fields = Vec::new();
                field_paths(body, "", &mut fields);
                self.configured_fields.insert(op, fields);
            }
        }
        self
    }

    /// A request of a call the spec does not show, against its configured definition: a
    /// field the definition sends and the request lacks is a warning (the staging decides).
    fn configured_shape(&self, op: Operation, body: &Value) -> Option<Check> {
        let fields = self.configured_fields.get(&op)?;
        let missing: Vec<&str> = fields
            .iter()
            .filter(|path| !has_path(body, path))
            .map(String::as_str)
            .collect();
        Some(if missing.is_empty() {
            Check::pass(
                CONFIGURED_SHAPE,
                "every field the configured definition sends",
            )
        } else {
            Check::fail(
                CONFIGURED_SHAPE,
                format!(
                    "$.{}: not sent, though the configured definition sends it (the spec does not show this call: not failed)",
                    missing.join(", $.")
                ),
            )
            .warning()
        })
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The booking a request concerns, from its body, its path or what earlier answers showed.
    fn booking_of(&self, recognised: &Recognised, body: &Value) -> Option<String> {
        let data = &body["data"];
        if let Some(bn) = text(&data["bookingNumber"]) {
            return Some(bn);
        }
        if let Some(bn) = path_value(recognised, "booking") {
            return Some(bn);
        }
        let known = self.known();
        if let Some(id) = path_value(recognised, "contract") {
            return known.contract_booking.get(&id).cloned();
        }
        if let Some(id) = path_value(recognised, "quote") {
            return known.quote_booking.get(&id).cloned();
        }
        None
    }

    #[cfg(test)]
    pub(crate) fn judge(&self, recognised: &Recognised, body: &[u8], now: DateTime<Utc>) -> Judged {
        self.judge_sent(recognised, None, body, now)
    }

    /// The checks of a request sent with `content_type`: by its configured endpoint's media
    /// type and form when that is not the spec's JSON, and by the spec's rules on the spec's
    /// view of it (a JSON:API document's attributes, a multipart body's JSON part).
    pub(crate) fn judge_sent(
        &self,
        recognised: &Recognised,
        content_type: Option<&str>,
        body: &[u8],
        now: DateTime<Utc>,
    ) -> Judged {
        let (json, parsed) = wire::parsed_view(body);
        let booking = self.booking_of(recognised, &json);
        let op = recognised.operation;
        let production = self.environment == Environment::Production;
        let mut checks = Vec::new();
        match (op, self.configured_wire.get(&op)) {
            (Operation::ReadContracts, _) => {}
            // The spec does not show these calls' payloads: the definition in force is the rule.
            (Operation::QuoteDeletion | Operation::FlightCancellation, configured) => {
                checks.extend(configured.and_then(|c| c.media_check(content_type)));
                let raw: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
                checks.extend(self.configured_shape(op, &raw));
            }
            (_, Some(configured)) => {
                checks.extend(configured.judge(content_type, body));
                if configured.spec_rules_apply() {
                    let viewed = json.to_string();
                    let judged =
                        check_request(self.dialect, op, viewed.as_bytes(), now, production);
                    checks.push(spec_rules(judged));
                }
            }
            // The view of a plain JSON body is the body parsed: judged as it is, not parsed
            // again (same verdict and words, `check_parsed_request`'s test).
            _ if parsed => checks.push(spec_rules(check_parsed_request(
                self.dialect,
                op,
                &json,
                now,
                production,
            ))),
            _ => checks.push(spec_rules(check_request(
                self.dialect,
                op,
                body,
                now,
                production,
            ))),
        }
        let known = self.known();
        let state = booking.as_ref().and_then(|bn| known.bookings.get(bn));
        match op {
            Operation::Quote => checks.push(one_flight_plan(&json)),
            Operation::Subscription => checks.push(match state.and_then(|b| b.subscribed_at) {
                Some(at) => Check::fail(NOT_REUSED, format!("booking number `{}` was already subscribed at {}; a booking is subscribed once, then updated", booking.as_deref().unwrap_or_default(), at.to_rfc3339())),
                None => Check::pass(NOT_REUSED, "a booking number not seen before"),
            }),
            Operation::Update => checks.push(fresh_update_quote(&json, state, booking.as_deref())),
            Operation::Claim => checks.push(claim_timing(&json, state, now, production)),
            _ => {}
        }
        Judged {
            booking,
            checks,
            view: std::sync::Arc::new(json),
        }
    }

    /// Learns from an accepted answer what later requests will refer to; `request` is the
    /// spec's view of the body (as [`Judged::view`]).
    pub(crate) fn learn(
        &self,
        recognised: &Recognised,
        booking: Option<&str>,
        request: &Value,
        answer: &Value,
        now: DateTime<Utc>,
    ) {
        let mut known = self.known();
        let mut contracts = Vec::new();
        contract_ids(answer, &mut contracts);
        if let Some(bn) = booking {
            for id in contracts {
                known.contract_booking.insert(id, bn.to_string());
            }
        }
        let Some(bn) = booking else { return };
        match recognised.operation {
            // A multi-bundle answer offers one quote per bundle: the partner may use any.
            Operation::Quote => match crate::answer::bundles::entries(answer) {
                Some((entries, _)) => entries
                    .iter()
                    .filter_map(|entry| text(&entry["id"]))
                    .for_each(|id| known.quote_made(bn, id)),
                None => {
                    if let Some(id) = find(answer, "id") {
                        known.quote_made(bn, id);
                    }
                }
            },
            Operation::Subscription => {
                if let Some(quotes) = request["data"]["quotes"].as_array() {
                    for reference in quotes.iter().filter_map(|q| text(&q["reference"])) {
                        known.quote_booking.insert(reference, bn.to_string());
                    }
                }
                known
                    .bookings
                    .entry(bn.to_string())
                    .or_default()
                    .subscribed_at
                    .get_or_insert(now);
            }
            Operation::Update => {
                let used: Vec<String> = request["data"]["quotes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|q| text(&q["id"]))
                    .collect();
                if let Some(state) = known.bookings.get_mut(bn) {
                    for id in used {
                        state.update_quotes.remove(&id);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Spec: one quote per unique flight plan; trips of one quote with different flights are a
/// multi-plan booking sent as one quote.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::sequencing::{CLAIM_AFTER_24H, FRESH_UPDATE_QUOTE};
    use chrono::Duration;
    use std::collections::BTreeMap;

    fn recognised(operation: Operation, values: &[(&str, &str)]) -> Recognised {
        Recognised {
            operation,
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    fn failed(judged: &Judged) -> Vec<&str> {
        judged
            .checks
            .iter()
            .filter(|c| !c.passed && !c.warning)
            .map(|c| c.name.as_str())
            .collect()
    }

    #[test]
    fn sequencing_rules_follow_the_session() {
        let rules = Rules::new(ApiDialect::Spec, Environment::Staging);
        let now = Utc::now();
        let subscribe = recognised(Operation::Subscription, &[]);
        let body = br#"{"data": {"bookingNumber": "BN1", "quotes": [{"reference": "R1", "travelers": []}]}}"#;
        let judged = rules.judge(&subscribe, body, now);
        assert_eq!(judged.booking.as_deref(), Some("BN1"));
        assert!(!failed(&judged).contains(&NOT_REUSED));
        let answer = serde_json::json!({"data": {"contracts": [{"id": "ct_1", "productType": "WITHDRAWAL"}]}});
        rules.learn(&subscribe, Some("BN1"), &wire::view(body), &answer, now);
        assert!(failed(&rules.judge(&subscribe, body, now)).contains(&NOT_REUSED));

        let update = recognised(Operation::Update, &[("booking.number", "BN1")]);
        let with_q9 = br#"{"data": {"quotes": [{"id": "q9", "travelers": []}]}}"#;
        assert!(failed(&rules.judge(&update, with_q9, now)).contains(&FRESH_UPDATE_QUOTE));
        let quote = recognised(Operation::Quote, &[]);
        rules.learn(
            &quote,
            Some("BN1"),
            &wire::view(b"{}"),
            &serde_json::json!({"data": {"id": "q9"}}),
            now,
        );
        assert!(!failed(&rules.judge(&update, with_q9, now)).contains(&FRESH_UPDATE_QUOTE));
        // A multi-bundle answer: the second bundle's quote is a fresh update quote too.
        let bundled = serde_json::json!({"data": [{"id": "q10", "bundle": "Silver"}, {"id": "q11", "bundle": "Gold"}]});
        rules.learn(&quote, Some("BN1"), &wire::view(b"{}"), &bundled, now);
        let with_q11 = br#"{"data": {"quotes": [{"id": "q11", "travelers": []}]}}"#;
        assert!(!failed(&rules.judge(&update, with_q11, now)).contains(&FRESH_UPDATE_QUOTE));

        let claim = recognised(Operation::Claim, &[("contract.id", "ct_1")]);
        let early = rules.judge(&claim, br#"{"data": {}}"#, now + Duration::hours(1));
        assert_eq!(
            early.booking.as_deref(),
            Some("BN1"),
            "attributed through the contract"
        );
        assert!(failed(&early).contains(&CLAIM_AFTER_24H));
        let dated = rules.judge(
            &claim,
            br#"{"data": {"claimDate": "2030-01-01"}}"#,
            now + Duration::hours(1),
        );
        assert!(!failed(&dated).contains(&CLAIM_AFTER_24H));
        let late = rules.judge(&claim, br#"{"data": {}}"#, now + Duration::hours(25));
        assert!(!failed(&late).contains(&CLAIM_AFTER_24H));
    }

    #[test]
    fn a_call_the_spec_does_not_show_is_held_to_its_configured_definition_only() {
        let docs = crate::dialect::resolve("provider-docs").unwrap();
        let endpoints = crate::endpoints::Endpoints::compile(&crate::dialect::definitions(
            &docs,
            &crate::dialect::Definitions::new(),
        ))
        .unwrap();
        let rules = Rules::new(ApiDialect::Spec, Environment::Staging).with_definitions(&endpoints);
        let report = recognised(Operation::FlightCancellation, &[]);
        let body = br#"{"data": {"status": "Canceled", "providedAt": "2030-01-01T00:00:00Z"}}"#;
        let judged = rules.judge(&report, body, Utc::now());
        assert!(failed(&judged).is_empty(), "{:?}", judged.checks);
        let partial = rules.judge(&report, br#"{"data": {"status": "Canceled"}}"#, Utc::now());
        assert!(
            failed(&partial).is_empty(),
            "a missing field is only a warning"
        );
        assert!(
            partial
                .checks
                .iter()
                .any(|c| c.warning && c.detail.contains("providedAt"))
        );
    }

    #[test]
    fn the_sandbox_s_own_choices_warn_and_the_spec_s_rules_fail() {
        let rules = Rules::new(ApiDialect::Spec, Environment::Staging);
        let quote = recognised(Operation::Quote, &[]);
        let judged = rules.judge(&quote, br#"{"data": {}}"#, Utc::now());
        assert!(
            failed(&judged).contains(&SPEC_RULES),
            "a missing mandatory field fails"
        );
        let booking =
            crate::datagen::Generator::new(3, "T", Utc::now(), Default::default()).booking(0);
        let mut body = serde_json::json!({"data": booking.quote_request(0, false)});
        body["data"]["bookingNumber"] = serde_json::json!("has spaces/and slashes");
        let judged = rules.judge(&quote, body.to_string().as_bytes(), Utc::now());
        assert!(failed(&judged).is_empty(), "{:?}", judged.checks);
        assert!(
            judged
                .checks
                .iter()
                .any(|c| c.warning && c.name == SPEC_RULES)
        );
    }

    #[test]
    fn several_flight_plans_in_one_quote_are_named() {
        let two = serde_json::json!({"data": {"trips": [{"journeys": [{"flights": [{"number": "1"}]}]}, {"journeys": [{"flights": [{"number": "2"}]}]}]}});
        assert!(!one_flight_plan(&two).passed);
        let shared = serde_json::json!({"data": {"trips": [{"journeys": [{"flights": [{"number": "1"}]}]}]}});
        assert!(one_flight_plan(&shared).passed);
    }
}

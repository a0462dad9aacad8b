//! Which operation on the provider's side a successful exchange was, so that the same
//! operation recorded by two bundles (the same bundle added twice, a run and the proxy it went
//! through, an interrupted run and its resumption) counts once: quotes by id (else reference),
//! subscriptions by booking number, claims by claim id (else contract), deletions by the quote
//! they named, updates and flight-cancellation reports by booking and what was sent.

use serde_json::Value;

use crate::models::Operation;
use crate::record::Exchange;

/// The identity of the operation a counted exchange performed.
pub(crate) fn key(exchange: &Exchange) -> String {
    let operation = exchange.operation;
    let booking = exchange.booking_number.as_deref();
    let found = match operation {
        Operation::Quote => read(exchange, "id")
            .or_else(|| answered(exchange, "id"))
            .or_else(|| read(exchange, "reference"))
            .or_else(|| answered(exchange, "reference")),
        Operation::Subscription => booking
            .map(str::to_string)
            .or_else(|| sent(exchange, "bookingNumber")),
        Operation::Claim => read(exchange, "claim_id")
            .or_else(|| answered(exchange, "id"))
            .or_else(|| Some(path(&exchange.url))),
        Operation::QuoteDeletion => Some(path(&exchange.url)),
        _ => booking.map(|b| format!("{b} {}", body_digest(exchange))),
    };
    match found {
        Some(found) => format!("{operation} {found}"),
        // Nothing names it: the exchange itself, as recorded (the same record twice is one).
        None => format!(
            "{operation} {} {} {} {}",
            exchange.started_at,
            exchange.method,
            path(&exchange.url),
            body_digest(exchange)
        ),
    }
}

/// A value the engine read from the answer (`reads`).
fn read(exchange: &Exchange, name: &str) -> Option<String> {
    (exchange.reads.iter())
        .find(|r| r.name == name)
        .and_then(|r| r.value.clone())
}

/// A top-level field of the answer, wrapped in `data` or not (the proxy reads nothing itself).
fn answered(exchange: &Exchange, name: &str) -> Option<String> {
    let body = exchange.response.as_ref()?.json();
    field(&body, name)
}

/// A top-level field of the request's body, wrapped in `data` or not.
fn sent(exchange: &Exchange, name: &str) -> Option<String> {
    let body = exchange.request.body.as_ref()?.to_value();
    field(&body, name)
}

fn field(body: &Value, name: &str) -> Option<String> {
    let inner = body.get("data").unwrap_or(body);
    // A multi-bundle quote answer: the first entry names the quote.
    let inner = inner.as_array().and_then(|a| a.first()).unwrap_or(inner);
    match inner.get(name)? {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The URL's path and query: the same call through a proxy or straight has the same.
fn path(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) => match parsed.query() {
            Some(query) => format!("{}?{query}", parsed.path()),
            None => parsed.path().to_string(),
        },
        Err(_) => url.to_string(),
    }
}

fn body_digest(exchange: &Exchange) -> String {
    let body = exchange.request.body.as_ref().map_or("", |b| b.json());
    crate::digest::sha256_hex(body.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(operation: Operation, url: &str, answer: Value) -> Exchange {
        let text = serde_json::json!({
            "seq": 1, "flow": "f#1", "step": "s", "operation": operation,
            "booking_number": "B1", "attempt": 1, "method": "POST", "url": url,
            "started_at": "2026-01-01T00:00:00.000Z", "duration_ms": 1,
            "request": {"headers": {}, "body": {"data": {"bookingNumber": "B1"}}},
            "response": {"status": 201, "headers": {}, "body": answer},
            "outcome": "passed", "checks": [], "error": null
        });
        serde_json::from_value(text).unwrap()
    }

    #[test]
    fn the_same_operation_has_one_key_however_it_was_recorded() {
        let quote = |url| {
            exchange(
                Operation::Quote,
                url,
                serde_json::json!({"data": {"id": "q1"}}),
            )
        };
        // Straight to staging, and through a proxy on another host and port.
        assert_eq!(key(&quote("https://s.example/quotes")), "quote q1");
        assert_eq!(key(&quote("http://127.0.0.1:9/quotes")), "quote q1");
        let listed = exchange(
            Operation::Quote,
            "/q",
            serde_json::json!({"data": [{"id": 7}]}),
        );
        assert_eq!(key(&listed), "quote 7");
        let deletion = exchange(Operation::QuoteDeletion, "http://h/quotes/q1", Value::Null);
        assert_eq!(key(&deletion), "quote_deletion /quotes/q1");
        let subscription = exchange(
            Operation::Subscription,
            "http://h/subscriptions",
            Value::Null,
        );
        assert_eq!(key(&subscription), "subscription B1");
        let nameless = exchange(Operation::Quote, "http://h/quotes", Value::Null);
        assert!(key(&nameless).starts_with("quote 2026-01-01T00:00:00.000Z POST /quotes "));
    }
}

//! Test fixtures shared by the sandbox's own tests and ppcert's CLI tests (feature `testing`).
//!
//! A sandbox on an ephemeral loopback port, a raw HTTP client for it with the spec's headers,
//! and valid request bodies. Defined once here so both suites build requests the same way;
//! only test builds turn the feature on (through dev-dependencies), never a release binary.

mod servers;
pub mod webhooks;

pub use servers::{fast_options, http_client, sandbox, sandbox_with, serve};

use chrono::{Duration, SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::server::Sandbox;

/// A raw HTTP client for a sandbox, with the spec's headers.
pub struct Api {
    pub base: String,
    pub token: String,
    pub http: reqwest::Client,
}

/// An answer read whole: status, JSON body (`null` when it is not JSON) and headers.
pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Api {
    pub fn new(sandbox: &Sandbox) -> Api {
        Api {
            base: sandbox.base_url(),
            token: sandbox.token().to_string(),
            http: http_client(),
        }
    }

    pub async fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Reply {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("Content-Type", "application/JSON")
            .header("accept", "application/JSON")
            .header("Authorization", format!("Bearer {}", self.token));
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send().await.expect("sandbox answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            body,
            headers,
        }
    }

    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        self.send("POST", path, Some(body)).await
    }

    /// POST /quotes for `travelers` adults on one flight 30 days ahead; returns (id, reference).
    pub async fn quote(&self, travelers: usize, price: f64) -> (String, String) {
        self.quote_with(&quote_body(travelers, price, 30)).await
    }

    /// POST /quotes with `body`, which must be accepted; returns (id, reference).
    pub async fn quote_with(&self, body: &Value) -> (String, String) {
        let reply = self.post("/quotes", body).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let data = &reply.body["data"];
        (
            data["id"].as_str().unwrap().to_string(),
            data["reference"].as_str().unwrap().to_string(),
        )
    }

    /// Quote then subscribe `booking` for one adult; returns the WITHDRAWAL contract id.
    pub async fn subscribe(&self, booking: &str) -> String {
        let (_, reference) = self.quote(1, 400.0).await;
        let reply = self
            .post(
                "/subscriptions",
                &subscription_body(booking, &[(&reference, 1)]),
            )
            .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        reply.body["data"]["contracts"][0]["id"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

pub fn iso(at: chrono::DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, false)
}

pub fn flight(days_ahead: i64) -> Value {
    let departure = Utc::now() + Duration::days(days_ahead);
    json!({
        "airlineIata": "AF", "number": "1234",
        "departureAirportIata": "CDG", "arrivalAirportIata": "FCO",
        "departureDate": iso(departure), "arrivalDate": iso(departure + Duration::minutes(125)),
    })
}

pub fn quote_body(travelers: usize, price: f64, days_ahead: i64) -> Value {
    json!({"data": {
        "currency": "EUR",
        "trips": [{
            "price": {"amount": price, "currency": "EUR"},
            "journeys": [{"flights": [flight(days_ahead)]}],
            "travelers": vec![json!({"ageRange": "ADULT"}); travelers],
        }],
    }})
}

pub fn traveler(i: usize) -> Value {
    json!({"ageRange": "ADULT", "birthdate": "1980-02-03", "firstName": format!("Ana{i}"), "lastName": "Lopez"})
}

pub fn client() -> Value {
    json!({"email": "ana@example.com", "firstname": "Ana", "lastname": "Lopez"})
}

/// A subscription body using (reference, traveler count) pairs.
pub fn subscription_body(booking: &str, quotes: &[(&str, usize)]) -> Value {
    let quotes: Vec<Value> = quotes
        .iter()
        .map(|(reference, n)| json!({"reference": reference, "travelers": (0..*n).map(traveler).collect::<Vec<_>>()}))
        .collect();
    json!({"data": {"bookingNumber": booking, "quotes": quotes, "client": client()}})
}

pub fn update_body(quote_id: &str, travelers: usize) -> Value {
    json!({"data": {"quotes": [{"id": quote_id, "travelers": (0..travelers).map(traveler).collect::<Vec<_>>()}], "client": client()}})
}

/// Requests the sandbox processed per operation, keyed by the operation's name.
pub fn sandbox_counts(sandbox: &Sandbox) -> std::collections::BTreeMap<String, u64> {
    sandbox
        .counts()
        .into_iter()
        .map(|(op, n)| (op.as_str().to_string(), n))
        .collect()
}

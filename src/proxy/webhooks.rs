//! `ppcert proxy --webhook-forward URL`: the proxy in the webhook path. The staging delivers
//! to `POST /_ppcert/webhooks` on the proxy; each delivery is passed on as it came (body and
//! signature headers) to the partner's receiver, its answer given back to the staging and
//! recorded; a `duplicate_webhook` fault passes one delivery on twice.

//! What needs the proxy's state (relaying and the route's handler) sits at the end of
//! `mod.rs`, beside the struct it uses.

use axum::body::Bytes;
use axum::http::{HeaderName, HeaderValue};

use crate::models::Operation;

/// Where the staging delivers: a path no API endpoint uses.
pub(crate) const PATH: &str = "/_ppcert/webhooks";

/// The event a delivery carries, the operation it follows and its booking.
pub(super) fn event_of(body: &Bytes) -> (Option<String>, Option<Operation>, Option<String>) {
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let event = json["event"]
        .as_str()
        .map(|e| e.chars().take(100).collect());
    let operation = match event.as_deref() {
        Some(crate::models::events::CONTRACT_CREATED) => Some(Operation::Subscription),
        Some(crate::models::events::CLAIM_UPDATED) => Some(Operation::Claim),
        _ => None,
    };
    let data = &json["data"];
    let contract = data.get("contract").unwrap_or(&data["claim"]["contract"]);
    let booking = contract["subscription"]["bookingNumber"]
        .as_str()
        .map(|b| b.chars().take(200).collect());
    (event, operation, booking)
}

/// One delivery passed on: the receiver's status and body, or why it did not answer.
pub(super) async fn pass_on<'a>(
    client: &reqwest::Client,
    to: &str,
    headers: impl Iterator<Item = (&'a HeaderName, &'a HeaderValue)>,
    body: &Bytes,
) -> Result<(u16, Bytes), String> {
    let mut request = client.post(to).body(body.clone());
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let answer = request.send().await.map_err(|e| {
        if e.is_timeout() {
            "the receiver timed out".to_string()
        } else {
            "the receiver did not answer".to_string()
        }
    })?;
    let status = answer.status().as_u16();
    Ok((status, answer.bytes().await.unwrap_or_default()))
}

//! The sandbox's webhook deliveries, through real HTTP on loopback: each scheme's signature is
//! verified with an independent HMAC; a failed delivery is retried on the documented, bounded
//! schedule with the same event, and an absent receiver is given up on.

use std::time::Duration;

use axum::http::StatusCode;
use ppcert_sandbox::models::webhook::Scheme;
use ppcert_sandbox::testing::webhooks::*;
use ppcert_sandbox::testing::*;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scheme_signs_so_that_an_independent_hmac_verifies_it() {
    for scheme in [Scheme::StandardWebhooks, Scheme::Github] {
        let (url, received) = receiver(|_| StatusCode::NO_CONTENT).await;
        let sandbox = sandbox_sending_to(&url, scheme, Duration::from_millis(20)).await;
        Api::new(&sandbox).subscribe("WH-SCHEME-1").await;
        until(&received, |all| !all.is_empty()).await;
        let (headers, body) = received.lock().unwrap()[0].clone();
        assert_signed(scheme, &headers, &body);
        let event: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(event["event"], "contract.created");
        assert_eq!(
            event["data"]["contract"]["subscription"]["bookingNumber"],
            "WH-SCHEME-1"
        );
    }
}

/// A receiver's answer: 503 to the first delivery, 200 from then on.
fn refused_once(n: usize) -> StatusCode {
    if n == 1 {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_delivery_is_retried_and_an_absent_receiver_is_given_up_on() {
    let (url, received) = receiver(refused_once).await;
    let sandbox = sandbox_sending_to(&url, Scheme::ProviderDocs, Duration::from_millis(20)).await;
    Api::new(&sandbox).subscribe("WH-RETRY-1").await;
    until(&received, |all| all.len() >= 2).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let attempts = sandbox.webhook_deliveries();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    assert_eq!((attempts[0].attempt, attempts[0].status), (1, Some(503)));
    assert_eq!((attempts[1].attempt, attempts[1].status), (2, Some(200)));
    assert_eq!(attempts[0].delivery_id, attempts[1].delivery_id);
    let (first, second) = {
        let all = received.lock().unwrap();
        (all[0].1.clone(), all[1].1.clone())
    };
    assert_eq!(first, second, "a retry resends the same event");

    // Nobody listens there: every attempt fails, and they stop after the schedule's length.
    let closed = {
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        socket.local_addr().unwrap()
    };
    let sandbox = sandbox_sending_to(
        &format!("http://{closed}/hooks"),
        Scheme::ProviderDocs,
        Duration::from_millis(10),
    )
    .await;
    Api::new(&sandbox).subscribe("WH-RETRY-2").await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    let attempts = sandbox.webhook_deliveries();
    assert_eq!(attempts.len(), 4, "one try and three retries: {attempts:?}");
    assert!(
        attempts
            .iter()
            .all(|a| a.status.is_none() && a.error.is_some())
    );
}

/// Stopping settles the deliveries already due: a delivery refused once is waited for until
/// its retry is delivered, not dropped after a fixed pause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settling_waits_for_a_due_delivery_through_its_retry() {
    let (url, received) = receiver(refused_once).await;
    let sandbox = sandbox_sending_to(&url, Scheme::ProviderDocs, Duration::from_millis(400)).await;
    Api::new(&sandbox).subscribe("WH-SETTLE-1").await;
    sandbox.settle_webhooks(Duration::from_secs(5)).await;
    let attempts = sandbox.webhook_deliveries();
    assert_eq!(attempts.len(), 2, "the retry was waited for: {attempts:?}");
    assert_eq!(attempts[1].status, Some(200), "{attempts:?}");
    assert_eq!(received.lock().unwrap().len(), 2);
}

//! The proxy's own forwarding rate for `proxy-large`: `ppcert proxy` in front of an upstream
//! that costs next to nothing (it reads each body whole and answers a quote's 201 taken once
//! from the sandbox), so that the proxy, not the staging behind it, is what runs out of CPU.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::StatusCode;

/// A quote's answer from the sandbox: its status and body, as the proxy will see it from the
/// free upstream.
fn one_quote_answer(runtime: &tokio::runtime::Runtime, base: &str, token: &str) -> (u16, Bytes) {
    runtime.block_on(async {
        let answer = reqwest::Client::new()
            .post(format!("{base}/quotes"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(super::quote_body())
            .send()
            .await
            .expect("the sandbox answers a quote");
        let status = answer.status().as_u16();
        (status, answer.bytes().await.unwrap_or_default())
    })
}

/// Starts the free upstream on an ephemeral loopback port, answering every request with the
/// sandbox's answer to one quote; its base URL.
pub(crate) fn start(runtime: &tokio::runtime::Runtime, base: &str, token: &str) -> String {
    let (status, body) = one_quote_answer(runtime, base, token);
    assert!(
        (200..300).contains(&status),
        "the sandbox accepted the bench's quote"
    );
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::CREATED);
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let body = body.clone();
        async move {
            // Read whole, as any upstream must before answering.
            let _ = axum::body::to_bytes(request.into_body(), usize::MAX).await;
            (status, [("content-type", "application/json")], body)
        }
    });
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a loopback port");
    let addr = listener.local_addr().unwrap();
    runtime.spawn(async move { axum::serve(listener, app).await });
    std::thread::sleep(Duration::from_millis(20));
    format!("http://{addr}")
}

//! The sandbox's transport options: gzip only when the client accepts it, and the headers
//! every API call must carry, refused in a gateway's words.

use std::io::Read as _;

use ppcert_sandbox::testing::*;
use ppcert_sandbox::{SandboxOptions, Transport};

async fn post_quote(
    sandbox: &ppcert_sandbox::Sandbox,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = http_client()
        .post(format!("{}/quotes", sandbox.base_url()))
        .header("Content-Type", "application/json")
        .header("Authorization", format!("Bearer {}", sandbox.token()))
        .body(quote_body(1, 100.0, 30).to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn answers_are_gzipped_only_for_a_client_that_accepts_gzip() {
    let sandbox = sandbox_with(SandboxOptions {
        transport: Transport {
            gzip: true,
            ..Transport::default()
        },
        ..SandboxOptions::default()
    })
    .await;
    let plain = post_quote(&sandbox, &[]).await;
    assert!(plain.headers().get("content-encoding").is_none());
    assert_eq!(plain.status(), 201);
    let gzipped = post_quote(&sandbox, &[("Accept-Encoding", "br;q=0, gzip")]).await;
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    let bytes = gzipped.bytes().await.unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .unwrap();
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(body["data"]["id"].is_string(), "{body}");
    let refused = post_quote(&sandbox, &[("Accept-Encoding", "gzip;q=0")]).await;
    assert!(refused.headers().get("content-encoding").is_none());
}

#[tokio::test]
async fn a_missing_version_header_is_400_and_a_missing_gateway_key_a_401_not_about_the_token() {
    let sandbox = sandbox_with(SandboxOptions {
        transport: Transport {
            required_headers: vec![
                ("X-Api-Version".into(), "2".into()),
                ("X-Gateway-Key".into(), "k-123".into()),
            ],
            ..Transport::default()
        },
        ..SandboxOptions::default()
    })
    .await;
    let none = post_quote(&sandbox, &[]).await;
    assert_eq!(none.status(), 400);
    let words = none.text().await.unwrap();
    assert!(
        words.contains("this API needs the header X-Api-Version: 2"),
        "{words}"
    );
    let no_key = post_quote(&sandbox, &[("X-Api-Version", "2")]).await;
    assert_eq!(no_key.status(), 401);
    assert!(
        !no_key.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("Bearer")
    );
    assert!(no_key.text().await.unwrap().contains("missing gateway key"));
    let both = post_quote(
        &sandbox,
        &[("X-Api-Version", "2"), ("X-Gateway-Key", "k-123")],
    )
    .await;
    assert_eq!(both.status(), 201);
    assert_eq!(sandbox.counts().values().sum::<u64>(), 1);
}

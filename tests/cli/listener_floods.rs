//! Listeners under floods a sender can make without any credential: a body too large gets
//! its 413 read (a lingering close, not a reset), silent connections far beyond
//! `--max-connections` do not keep a real request waiting, and every error is JSON.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::*;
use crate::listeners::{KINDS, ended, post_path, start};

/// The whole answer on `tcp`, until the server closes: its head and its body.
async fn whole_answer(tcp: &mut TcpStream, kind: &str) -> (String, String) {
    let mut bytes = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(60), tcp.read_to_end(&mut bytes));
    read.await
        .unwrap_or_else(|_| panic!("{kind}: the connection was never closed"))
        .unwrap_or_else(|e| panic!("{kind}: the answer could not be read: {e}"));
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (head.to_string(), body.to_string())
}

/// A sender that writes its whole 2 MiB body before reading (as most HTTP clients do) used to
/// see a broken pipe or a reset: the listener answered 413 and closed with the body unread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2_mib_body_gets_its_413_read_in_json() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, addr, _) = start(kind, dir.path(), &["--max-body", "1MiB"]).await;
        for _ in 0..3 {
            let mut tcp = TcpStream::connect(&addr).await.unwrap();
            let body = vec![b' '; 2 << 20];
            let head = format!(
                "POST {} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                post_path(kind),
                body.len()
            );
            tcp.write_all(head.as_bytes()).await.unwrap();
            tcp.write_all(&body)
                .await
                .unwrap_or_else(|e| panic!("{kind}: the body could not be sent: {e}"));
            let (head, body) = whole_answer(&mut tcp, kind).await;
            assert!(head.starts_with("HTTP/1.1 413"), "{kind}: {head}");
            assert!(
                head.to_ascii_lowercase()
                    .contains("content-type: application/json"),
                "{kind}: {head}"
            );
            let error: serde_json::Value = serde_json::from_str(&body)
                .unwrap_or_else(|e| panic!("{kind}: not JSON ({e}): {body}"));
            assert_eq!(
                error["error"]["code"], "PAYLOAD_TOO_LARGE",
                "{kind}: {body}"
            );
            assert!(
                error["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("1048576 bytes")),
                "{kind}: {body}"
            );
        }
        interrupt(&child).await;
        ended(&mut child, kind).await;
    }
}

/// 300 connections that never send a byte, far beyond `--max-connections 4`, used to hold
/// every slot and keep a real request in the kernel's backlog until the header timeout (here
/// 600 s) closed them. The bound below is far beyond any answer's time and far below that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_beyond_the_limit_do_not_starve_a_request() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let limits = ["--max-connections", "4", "--header-timeout", "600"];
        let (mut child, addr, _) = start(kind, dir.path(), &limits).await;
        let mut silent = Vec::new();
        for _ in 0..300 {
            silent.push(TcpStream::connect(&addr).await.unwrap());
        }
        let mut tcp = TcpStream::connect(&addr).await.unwrap();
        let request = format!(
            "POST {} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}",
            post_path(kind)
        );
        tcp.write_all(request.as_bytes()).await.unwrap();
        let answered = tokio::time::timeout(Duration::from_secs(120), async {
            let mut bytes = vec![0u8; 64];
            tcp.read(&mut bytes).await.map(|n| bytes.truncate(n)).ok();
            String::from_utf8_lossy(&bytes).into_owned()
        });
        let head = answered
            .await
            .unwrap_or_else(|_| panic!("{kind}: starved by silent connections"));
        assert!(head.starts_with("HTTP/1.1 "), "{kind}: {head:?}");
        drop(silent);
        interrupt(&child).await;
        ended(&mut child, kind).await;
    }
}

/// A refusal by the HTTP layer itself (a path that is not UTF-8) is JSON like the API's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_that_is_not_utf8_is_refused_in_json() {
    let sandbox = ppcert::sandbox::testing::sandbox_with(Default::default()).await;
    let client = reqwest::Client::new();
    let url = format!("{}/subscriptions/%FF%FE/contracts", sandbox.base_url());
    let answer = client
        .get(&url)
        .bearer_auth(sandbox.token())
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let kind = answer
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string());
    let body = answer.text().await.unwrap();
    assert!((400..500).contains(&status), "{status} {body}");
    assert!(
        kind.as_deref().is_some_and(|k| k.contains("json")),
        "{kind:?}: {body}"
    );
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(error["error"]["code"].is_string(), "{body}");
}

//! Ctrl-C against every long-lived listener (`serve`, `proxy`, `webhook listen`) while
//! clients are mid-request: the first stops accepting and ends the listener within its grace
//! period, whatever a client holds (half a header, a body trickling in), and the proxy still
//! writes its bundle; a second exits at once with 130, even when the first is handled late.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::*;
use crate::listeners::{KINDS, ended, post_path, start, start_with};

/// A request in flight: a whole header, then one byte of the thousand announced, sent once
/// the listener has started reading the body (its "100 Continue" says so).
async fn in_flight(addr: &str, kind: &str) -> TcpStream {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\nexpect: 100-continue\r\ncontent-length: 1000\r\n\r\n",
        post_path(kind)
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut answer = [0u8; 64];
    let n = tcp.read(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).to_string();
    assert!(answer.starts_with("HTTP/1.1 100"), "{kind}: {answer}");
    tcp.write_all(b"{").await.unwrap();
    tcp
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_header_does_not_block_shutdown() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        // The header timeout is far beyond the test's bound: only the grace period ends it.
        let limits = ["--shutdown-grace", "1", "--header-timeout", "600"];
        let (mut child, addr, _) = start(kind, dir.path(), &limits).await;
        let mut tcp = TcpStream::connect(&addr).await.unwrap();
        tcp.write_all(b"POST /quotes HTTP/1.1\r\nhost: x\r\ncontent-")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        interrupt(&child).await;
        let code = ended(&mut child, kind).await;
        assert_eq!(code, if kind == "proxy" { 1 } else { 0 }, "{kind}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sigint_stops_each_listener_mid_request_and_the_proxy_still_writes_its_bundle() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        // The body timeout is far beyond the test's bound: only the grace period ends it.
        let limits = ["--shutdown-grace", "1", "--body-timeout", "600"];
        let (mut child, addr, _) = start(kind, dir.path(), &limits).await;
        let _held = in_flight(&addr, kind).await;
        interrupt(&child).await;
        let code = ended(&mut child, kind).await;
        if kind == "proxy" {
            // Nothing was certified: the run's exit code says so, and the bundle verifies.
            assert_eq!(code, 1);
            let verified = ppcert(dir.path(), &["verify", "b"], None).await;
            assert_eq!(verified.code, 0, "{}{}", verified.stdout, verified.stderr);
        } else {
            assert_eq!(code, 0, "{kind}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sigint_exits_at_once_with_130() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        // A grace period and a body timeout far longer than the test: only the second Ctrl-C
        // can end it in time. The listener is slow to handle the first (a loaded machine): the
        // second comes meanwhile and must not be lost.
        let limits = ["--shutdown-grace", "600", "--body-timeout", "600"];
        let slow = [("PPCERT_TEST_SLOW_AFTER_CTRL_C", "3000")];
        let (mut child, addr, _) = start_with(kind, dir.path(), &limits, &slow).await;
        let _held = in_flight(&addr, kind).await;
        interrupt(&child).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        interrupt(&child).await;
        assert_eq!(ended(&mut child, kind).await, 130, "{kind}");
    }
}

/// A request held open mid-body keeps the listener in its grace period: meanwhile the address
/// refuses new connections. The grace is longer than the test: a second Ctrl-C ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_sigint_stops_accepting_new_connections() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let limits = ["--shutdown-grace", "600", "--body-timeout", "600"];
        let (mut child, addr, _) = start(kind, dir.path(), &limits).await;
        let _held = in_flight(&addr, kind).await;
        interrupt(&child).await;
        let refused = tokio::time::timeout(Duration::from_secs(60), async {
            while TcpStream::connect(&addr).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        refused
            .await
            .unwrap_or_else(|_| panic!("{kind}: still accepting after Ctrl-C"));
        assert!(
            child.try_wait().unwrap().is_none(),
            "{kind}: refused because it stopped accepting, not because it ended"
        );
        interrupt(&child).await;
        assert_eq!(ended(&mut child, kind).await, 130, "{kind}");
    }
}

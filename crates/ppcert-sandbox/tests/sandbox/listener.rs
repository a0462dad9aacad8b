//! The bounded listener every long-lived server of ppcert runs in: beyond `max_connections`, a
//! client waits in the backlog until a served connection ends, instead of growing the server.

use std::time::Duration;

use ppcert_sandbox::listener::{Limits, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";

/// Reads until the first answer's head is in; `None` when nothing came within `wait`.
async fn answer(tcp: &mut TcpStream, wait: Duration) -> Option<String> {
    let mut bytes = vec![0u8; 1024];
    let read = tokio::time::timeout(wait, tcp.read(&mut bytes))
        .await
        .ok()?
        .ok()?;
    (read > 0).then(|| String::from_utf8_lossy(&bytes[..read]).into_owned())
}

/// A listener with one connection slot answering `GET /`: its address, its stop, its task.
async fn one_slot() -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
    let limits = Limits {
        max_connections: 1,
        ..Limits::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, router, limits, async {
        let _ = stopped.await;
    }));
    (addr, stop, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_the_connection_limit_a_client_waits_until_a_connection_ends() {
    let (addr, stop, server) = one_slot().await;

    let mut first = TcpStream::connect(addr).await.unwrap();
    first.write_all(REQUEST).await.unwrap();
    let served = answer(&mut first, Duration::from_secs(5)).await.unwrap();
    assert!(served.starts_with("HTTP/1.1 200"), "{served}");

    // The one slot is held by the first, kept-alive connection: the second is not served.
    let mut second = TcpStream::connect(addr).await.unwrap();
    second.write_all(REQUEST).await.unwrap();
    assert_eq!(answer(&mut second, Duration::from_millis(300)).await, None);

    drop(first);
    let served = answer(&mut second, Duration::from_secs(5)).await;
    assert!(
        served
            .as_deref()
            .is_some_and(|s| s.starts_with("HTTP/1.1 200")),
        "served once the first connection ended: {served:?}"
    );
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// A connection the server closes (`Connection: close`) ends, socket and slot: the client
/// reads to the end, and the next connection gets the one slot. A connection kept open after
/// HTTP was done with it (to close lingering) must still be closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_connection_frees_its_slot_and_its_socket() {
    let (addr, stop, server) = one_slot().await;
    for _ in 0..3 {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(30), tcp.read_to_end(&mut answer))
            .await
            .expect("the server closes the connection")
            .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

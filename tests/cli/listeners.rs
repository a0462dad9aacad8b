//! Every long-lived listener (`serve`, `proxy`, `webhook listen`, `run --webhook-listen`)
//! under hostile clients: an oversized body is answered 413 without being read, non-loopback
//! addresses need `--public`, forged deliveries are not kept, and sender text cannot forge
//! console lines. How Ctrl-C stops them mid-request: `listener_stops`.

use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::*;

pub const SECRET: &str = "whsec_bGlzdGVuZXJzLXRlc3Qtc2VjcmV0";

/// A listener's command line, listening on an ephemeral loopback port.
fn listener_args(kind: &str) -> Vec<&'static str> {
    match kind {
        "serve" => vec!["serve", "--addr", "127.0.0.1:0"],
        "proxy" => vec!["proxy", "--listen", "127.0.0.1:0", "--out", "b"],
        _ => vec![
            "webhook",
            "listen",
            "--addr",
            "127.0.0.1:0",
            "--out",
            "events.jsonl",
        ],
    }
}

pub const KINDS: [&str; 3] = ["serve", "proxy", "webhook"];

/// Starts a listener with `extra` flags; returns it, its `host:port`, and its stdout lines
/// (collected as they come).
pub async fn start(
    kind: &str,
    dir: &std::path::Path,
    extra: &[&str],
) -> (
    tokio::process::Child,
    String,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    start_with(kind, dir, extra, &[]).await
}

/// [`start`], with environment variables.
pub async fn start_with(
    kind: &str,
    dir: &std::path::Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (
    tokio::process::Child,
    String,
    std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) {
    let mut args = listener_args(kind);
    args.extend_from_slice(extra);
    let mut command = ppcert_command(dir, &args, None);
    command
        .env("PPCERT_WEBHOOK_SECRET", SECRET)
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = stdout.next_line().await.unwrap().unwrap();
    let addr = first
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap_or_else(|| panic!("{kind}: no address in {first:?}"))
        .trim_end_matches('/')
        .to_string();
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = stdout.next_line().await {
            sink.lock().unwrap().push(line);
        }
    });
    (child, addr, lines)
}

/// Waits for the listener to end; a listener that never ends fails the test (not a timing
/// assertion: the bound is far beyond the one-second grace period the tests give).
pub async fn ended(child: &mut tokio::process::Child, what: &str) -> i32 {
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .unwrap_or_else(|_| panic!("{what}: still running after one Ctrl-C"))
        .unwrap();
    status.code().unwrap_or(-1)
}

/// The path each listener answers a POST on.
pub fn post_path(kind: &str) -> &'static str {
    if kind == "webhook" {
        "/hooks"
    } else {
        "/quotes"
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_body_is_answered_413_before_it_is_read() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, addr, _) = start(kind, dir.path(), &["--max-body", "64KiB"]).await;
        let mut tcp = TcpStream::connect(&addr).await.unwrap();
        // Announces 100 MB and sends none of it: the answer must come without the body.
        let head = format!(
            "POST {} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 100000000\r\n\r\n",
            post_path(kind)
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        let mut answer = vec![0; 512];
        let n = tokio::time::timeout(Duration::from_secs(30), tcp.read(&mut answer))
            .await
            .unwrap_or_else(|_| panic!("{kind}: no answer before the body"))
            .unwrap();
        let answer = String::from_utf8_lossy(&answer[..n]).to_string();
        assert!(answer.starts_with("HTTP/1.1 413"), "{kind}: {answer}");
        assert!(answer.contains("65536 bytes"), "{kind}: {answer}");
        // A chunked body has no length to refuse up front: it is cut off as it goes past.
        let tcp = TcpStream::connect(&addr).await.unwrap();
        let (mut reader, mut writer) = tcp.into_split();
        let head = format!(
            "POST {} HTTP/1.1\r\nhost: {addr}\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n",
            post_path(kind),
            200 * 1024
        );
        tokio::spawn(async move {
            let _ = writer.write_all(head.as_bytes()).await;
            // The server may close before taking it all: that is the point.
            let _ = writer.write_all(&vec![b'x'; 200 * 1024]).await;
            std::future::pending::<()>().await;
        });
        let mut answer = vec![0; 512];
        let n = tokio::time::timeout(Duration::from_secs(30), reader.read(&mut answer))
            .await
            .unwrap_or_else(|_| panic!("{kind}: no answer to the chunked body"))
            .unwrap();
        let answer = String::from_utf8_lossy(&answer[..n]).to_string();
        assert!(
            answer.starts_with("HTTP/1.1 413"),
            "{kind} chunked: {answer}"
        );
        interrupt(&child).await;
        ended(&mut child, kind).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_address_needs_public() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [&[&str]; 4] = [
        &["serve", "--addr", "0.0.0.0:0"],
        &["proxy", "--listen", "0.0.0.0:0", "--out", "b"],
        &["webhook", "listen", "--addr", "0.0.0.0:0"],
        &[
            "run",
            "--base-url",
            "https://staging.example.invalid",
            "--webhook-listen",
            "0.0.0.0:0",
        ],
    ];
    for args in cases {
        let finished = ppcert_command(dir.path(), args, Some("tok-public-123"))
            .env("PPCERT_WEBHOOK_SECRET", SECRET)
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&finished.stderr);
        assert_eq!(finished.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("not a loopback address") && stderr.contains("--public"),
            "{args:?}: {stderr}"
        );
    }
    assert!(
        !dir.path().join("b").exists(),
        "nothing is written when refused"
    );
}

fn provider_signature(body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(body);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_deliveries_are_not_kept_and_sender_text_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr, stdout) = start("webhook", dir.path(), &["--shutdown-grace", "1"]).await;
    let url = format!("http://{addr}/hooks");
    let forged = format!(
        r#"{{"event": "claim.updated", "data": {{"bookingNumber": "FORGED-MARKER", "pad": "{}"}}}}"#,
        "y".repeat(100_000)
    );
    for _ in 0..3 {
        let status = http_client()
            .post(&url)
            .header("koala-signature", "00".repeat(32))
            .body(forged.clone())
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, 401);
    }
    // Signed, so accepted: its event name tries to end the line and paint the console.
    let hostile =
        "contract.created\n200 claim.updated booking FAKE → accepted\u{1b}[31m\u{2028}200 x";
    let body = serde_json::json!({"event": hostile, "data": {"bookingNumber": "BN-1"}})
        .to_string()
        .into_bytes();
    let status = http_client()
        .post(&url)
        .header("koala-signature", provider_signature(&body))
        .body(body)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
    interrupt(&child).await;
    ended(&mut child, "webhook listen").await;
    let kept = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
    assert!(!kept.contains("FORGED-MARKER"), "a forged body was kept");
    let lines: Vec<serde_json::Value> = kept
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    for forged in &lines[..3] {
        assert_eq!(forged["verdict"], "rejected");
        assert!(forged["body"].is_null() && forged["event"].is_null());
    }
    assert_eq!(
        lines[3]["event"], hostile,
        "the file keeps the text as sent"
    );
    let printed = stdout.lock().unwrap().join("\n");
    // Nor a line break only some readers see (a log viewer, Python's splitlines).
    assert!(!printed.contains(['\u{1b}', '\u{2028}']), "{printed}");
    assert!(
        !printed.lines().any(|l| l.starts_with("200 claim.updated")),
        "a forged console line: {printed}"
    );
    assert!(printed.contains(r"contract.created\u{a}200"), "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_forwards_a_large_body_unchanged_and_keeps_it_cut_with_its_digest() {
    use sha2::Digest as _;
    // An upstream that answers with a large body of its own.
    let answer = format!(
        r#"{{"data": {{"id": "q1", "pad": "{}"}}}}"#,
        "a".repeat(50_000)
    );
    let sent_back = answer.clone();
    let upstream = serve(axum::Router::new().fallback(move || {
        let body = sent_back.clone();
        async move {
            (
                axum::http::StatusCode::CREATED,
                [("content-type", "application/json")],
                body,
            )
        }
    }))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr, _) = start("proxy", dir.path(), &["--base-url", &upstream]).await;
    let request = format!(r#"{{"data": {{"pad": "{}"}}}}"#, "b".repeat(100_000));
    let reply = http_client()
        .post(format!("http://{addr}/quotes"))
        .bearer_auth("tok-large-123")
        .header("content-type", "application/json")
        .body(request.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 201);
    assert_eq!(reply.text().await.unwrap(), answer, "forwarded unchanged");
    interrupt(&child).await;
    ended(&mut child, "proxy").await;
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let exchange = &evidence["exchanges"][0];
    let hex = |text: &str| format!("{:x}", sha2::Sha256::digest(text.as_bytes()));
    for (record, whole) in [("request", &request), ("response", &answer)] {
        let cut = &exchange[record]["cut"];
        assert_eq!(cut["length"], whole.len(), "{record}: {exchange}");
        assert_eq!(cut["sha256"], hex(whole), "{record}");
        let kept = exchange[record]["body"].as_str().unwrap();
        assert_eq!(kept.len(), 16 * 1024, "{record}");
    }
}

/// With `--public` the listener starts on every interface and says what it exposes. Nothing
/// is sent to it: the test only reads the warning and stops the listener.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_listening_is_allowed_with_a_warning_naming_what_is_exposed() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["webhook", "listen", "--addr", "0.0.0.0:0", "--public"];
    let mut child = ppcert_command(dir.path(), &args, None)
        .env("PPCERT_WEBHOOK_SECRET", SECRET)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    let warning = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
        .await
        .expect("a line within 10 s")
        .unwrap()
        .unwrap_or_default();
    assert!(
        warning.starts_with("warning: --public: the webhook receiver")
            && warning.contains("reachable from the network"),
        "{warning}"
    );
    child.kill().await.unwrap();
}

/// A large body is judged and digested beside its forwarding: the upstream still receives
/// every byte as sent, the record keeps its exact length and SHA-256, and the verdict is the
/// one the same body without its large field gets. Under `--strict` a large body that breaks
/// a rule is still judged before anything is forwarded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_body_reaches_the_upstream_whole_and_is_judged_as_a_small_one() {
    use sha2::Digest as _;
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::<axum::body::Bytes>::new()));
    let kept = received.clone();
    let upstream = serve(
        axum::Router::new().fallback(move |body: axum::body::Bytes| {
            kept.lock().unwrap().push(body);
            async move {
                (
                    axum::http::StatusCode::CREATED,
                    [("content-type", "application/json")],
                    r#"{"data": {"id": "q1"}}"#,
                )
            }
        }),
    )
    .await;
    // Past the reader's buffer several times over, and not a multiple of it.
    let large = format!(
        r#"{{"data": {{"bookingNumber": "BN-LARGE-1", "pad": "{}"}}}}"#,
        "z".repeat(1_500_001)
    );
    let small = r#"{"data": {"bookingNumber": "BN-LARGE-1", "pad": "z"}}"#.to_string();
    let send = |addr: String, body: String| async move {
        http_client()
            .post(format!("http://{addr}/quotes"))
            .bearer_auth("tok-large-456")
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr, _) = start("proxy", dir.path(), &["--base-url", &upstream]).await;
    assert_eq!(send(addr.clone(), large.clone()).await.status(), 201);
    assert_eq!(send(addr.clone(), small.clone()).await.status(), 201);
    interrupt(&child).await;
    ended(&mut child, "proxy").await;
    {
        let received = received.lock().unwrap();
        assert_eq!(received.len(), 2);
        assert!(
            received[0] == large.as_bytes(),
            "the large body arrived altered"
        );
        assert!(received[1] == small.as_bytes());
    }
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let (big, little) = (&evidence["exchanges"][0], &evidence["exchanges"][1]);
    let cut = &big["request"]["cut"];
    assert_eq!(cut["length"], large.len());
    let digest = format!("{:x}", sha2::Sha256::digest(large.as_bytes()));
    assert_eq!(cut["sha256"], digest);
    assert_eq!(big["booking_number"], "BN-LARGE-1", "{big}");
    assert_eq!(
        big["checks"], little["checks"],
        "the same verdict, word for word"
    );
    assert!(
        big["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["passed"] == false),
        "a quote without its fields breaks the spec's rules: {big}"
    );

    let strict_dir = tempfile::tempdir().unwrap();
    let args = ["--base-url", upstream.as_str(), "--strict"];
    let (mut child, addr, _) = start("proxy", strict_dir.path(), &args).await;
    let refused = send(addr.clone(), large.clone()).await;
    assert_eq!(refused.status(), 400);
    let said = refused.text().await.unwrap();
    assert!(said.contains("REFUSED_BY_PPCERT_PROXY"), "{said}");
    interrupt(&child).await;
    ended(&mut child, "proxy").await;
    assert_eq!(received.lock().unwrap().len(), 2, "--strict forwarded it");
}

/// A request head within the 64 KiB a connection reads at a time is served; one far past it
/// is answered 431 and the connection closed (docs/listeners.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_head_within_64_kib_is_served_and_a_far_longer_one_refused_with_431() {
    for kind in KINDS {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, addr, _) = start(kind, dir.path(), &[]).await;
        for (size, expected) in [(60 * 1024, None), (1 << 20, Some("HTTP/1.1 431"))] {
            let mut tcp = TcpStream::connect(&addr).await.unwrap();
            let head = format!(
                "GET /openapi.json HTTP/1.1\r\nhost: {addr}\r\nx-pad: {}\r\nconnection: close\r\n\r\n",
                "p".repeat(size)
            );
            let _ = tcp.write_all(head.as_bytes()).await;
            let mut answer = vec![0; 64];
            let n = tokio::time::timeout(Duration::from_secs(30), tcp.read(&mut answer))
                .await
                .unwrap_or_else(|_| panic!("{kind}: no answer"))
                .unwrap_or(0);
            let answer = String::from_utf8_lossy(&answer[..n]).to_string();
            match expected {
                Some(status) => assert!(answer.starts_with(status), "{kind}: {answer}"),
                // Served: answered (whatever the route says), not refused and not dropped.
                None => assert!(
                    answer.starts_with("HTTP/1.1 ") && !answer.starts_with("HTTP/1.1 431"),
                    "{kind}: {answer}"
                ),
            }
        }
        interrupt(&child).await;
        ended(&mut child, kind).await;
    }
}

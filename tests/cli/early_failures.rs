//! A staging that is down fails every early flow for one reason: the console says it once,
//! and the other flows point at it.

use crate::common::*;

#[tokio::test]
async fn a_closed_port_is_said_once_not_once_per_flow() {
    // A port that was free a moment ago and is closed now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let args = [
        "run",
        "--base-url",
        &base,
        "--out",
        "b",
        "--partner-name",
        "Acme",
        "--no-progress",
    ];
    let done = ppcert(dir.path(), &args, Some("a-token-for-a-closed-port")).await;
    assert_eq!(done.code, 4, "{}{}", done.stdout, done.stderr);
    let said = done.stderr.matches("connection failed").count();
    assert_eq!(said, 1, "{}", done.stderr);
    let failed = done
        .stderr
        .lines()
        .filter(|l| l.contains(" FAILED ("))
        .count();
    assert!(
        failed > 1,
        "each early flow still has its line: {}",
        done.stderr
    );
    assert!(done.stderr.contains("above"), "{}", done.stderr);
    crate::docs_refs::troubleshooting_quotes(&done.stderr, "the target could not be reached");
}

//! `duplicate_webhook` end to end: `ppcert serve --webhook-url` delivers its webhooks to the
//! proxy's webhook path, and `proxy --webhook-forward` passes each on to the partner's
//! receiver (written here), the first `contract.created` twice. A receiver that acknowledges
//! both handles the fault; one that refuses the duplicate mishandles it.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use crate::common::*;
use crate::proxy::{Partner, start_proxy, stop};
use crate::proxy_faults::receiver;

/// A TCP relay on a free loopback port to the address set later: the proxy is started with
/// it as its staging before `ppcert serve` (which needs the proxy's address for its
/// webhooks) is listening.
async fn relay() -> (String, Arc<OnceLock<SocketAddr>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let target = Arc::new(OnceLock::<SocketAddr>::new());
    let to = target.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let Some(addr) = to.get().copied() else {
                continue; // nothing to relay to yet: the connection is dropped
            };
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(addr).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    (url, target)
}

/// `ppcert serve` delivering its webhooks to `hooks`: the child, its base URL and token.
async fn serve_delivering_to(
    dir: &std::path::Path,
    hooks: &str,
) -> (tokio::process::Child, String, String) {
    std::fs::write(dir.join("secret"), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    let args = [
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--webhook-url",
        hooks,
        "--webhook-secret-file",
        "secret",
        // Its deliveries carry a `webhook-id`, by which the receiver knows a duplicate.
        "--webhook-scheme",
        "standard-webhooks",
    ];
    let mut child = ppcert_command(dir, &args, None)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // `ppcert serve` prints its address, then its token, each as a line's last word.
    let mut word = async || {
        let line = stdout
            .next_line()
            .await
            .unwrap()
            .expect("a line from serve");
        line.rsplit(' ').next().unwrap().to_string()
    };
    let base = word().await;
    let token = word().await;
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    (child, base, token)
}

/// A booking subscribed through the proxy; `serve` delivers its `contract.created` through
/// the proxy to a receiver that does (or does not) acknowledge a duplicate. The fault's row,
/// the deliveries the receiver saw, and the bundle's directory.
async fn delivered(refuse_duplicates: bool) -> (Value, Vec<(String, String)>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hooks, seen) = receiver(refuse_duplicates).await;
    let plan = "[[faults]]\noperation = \"subscription\"\nkind = \"duplicate_webhook\"\nnth = 1\n";
    std::fs::write(dir.path().join("plan.toml"), plan).unwrap();
    let (staging, target) = relay().await;
    let extra = ["--faults", "plan.toml", "--webhook-forward", hooks.as_str()];
    let (mut proxy, url) = start_proxy(dir.path(), &staging, &extra).await;
    let (mut serve, base, token) =
        serve_delivering_to(dir.path(), &format!("{url}/_ppcert/webhooks")).await;
    let addr = base.trim_start_matches("http://").parse().unwrap();
    target.set(addr).unwrap();
    let partner = Partner::at(url, &token);
    let (_, reference) = partner.quote(quote_body(1, 250.0, 30)).await;
    let body = subscription_body("HOOK-SERVE-1", &[(&reference, 1)]);
    let (status, answer) = partner.call("POST", "/subscriptions", Some(body)).await;
    assert_eq!(status, 201, "{answer}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while seen.lock().unwrap().len() < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the receiver did not get the delivery and its duplicate: {:?}",
            seen.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop(&mut proxy).await;
    let _ = serve.kill().await;
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let faults = evidence["resilience"]["faults"].as_array().unwrap().clone();
    assert_eq!(faults.len(), 1, "{faults:?}");
    let seen = seen.lock().unwrap().clone();
    (faults[0].clone(), seen, dir)
}

/// What the receiver got was the sandbox's own delivery: the event of the booking
/// subscribed, signed, the duplicate the same bytes under the same id.
fn same_delivery_twice(seen: &[(String, String)]) {
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0], seen[1], "the duplicate is the same delivery");
    assert!(!seen[0].0.is_empty(), "a delivery id: {seen:?}");
    let event: Value = serde_json::from_str(&seen[0].1).unwrap();
    assert_eq!(event["event"], "contract.created", "{event}");
    assert!(seen[0].1.contains("HOOK-SERVE-1"), "{event}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_delivering_through_the_proxy_to_a_receiver_that_acknowledges_both_is_handled() {
    let (fault, seen, dir) = delivered(false).await;
    same_delivery_twice(&seen);
    assert_eq!(
        (&fault["kind"], &fault["verdict"]),
        (&"duplicate_webhook".into(), &"handled".into()),
        "{fault}"
    );
    assert!(
        fault["client_did"]
            .as_str()
            .unwrap()
            .contains("204 then 204"),
        "{fault}"
    );
    assert_eq!(resilience_row(&dir)["met"], true);
    let verified = ppcert(dir.path(), &["verify", "b"], None).await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_delivering_through_the_proxy_to_a_receiver_that_refuses_the_duplicate_is_mishandled()
{
    let (fault, seen, dir) = delivered(true).await;
    same_delivery_twice(&seen);
    assert_eq!(fault["verdict"], "mishandled", "{fault}");
    assert!(
        fault["client_did"]
            .as_str()
            .unwrap()
            .contains("answered the delivery 204 and its duplicate 500"),
        "{fault}"
    );
    assert_eq!(resilience_row(&dir)["failed"], 1);
    assert_eq!(resilience_row(&dir)["met"], false);
}

/// The ledger's resilience row of the bundle in `dir`.
fn resilience_row(dir: &tempfile::TempDir) -> Value {
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let row = evidence["requirements"].as_array().unwrap().last().cloned();
    let row = row.unwrap();
    assert_eq!(row["operation"], "resilience", "{row}");
    row
}

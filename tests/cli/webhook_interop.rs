//! Signature interop with reference implementations ppcert did not write, installed by
//! `.ci/run`: the official Standard Webhooks Python library (`standardwebhooks`) and GitHub's
//! `@octokit/webhooks-methods`. Deliveries they sign are accepted by `ppcert webhook listen`
//! (and ones signed with another key refused), and a receiver verifying with them passes every
//! expectation of `ppcert webhook send`, as do the sandbox's own deliveries. (The provider's
//! own scheme has no reference implementation to test against.)
//!
//! Every test here needs those references, so a plain `cargo test` lists them as ignored;
//! `.ci/run` installs them and runs the ignored tests, where a missing one fails.

use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use crate::common::*;

/// A secret as Standard Webhooks issues them: `whsec_` and the base64 of the key.
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// The Python with the official Standard Webhooks library (see [`reference_python`]).
fn python() -> String {
    reference_python("standardwebhooks", "the Standard Webhooks interop check")
}

const SIGN: &str = r#"
import datetime, json, sys
from standardwebhooks import Webhook
secret, msg_id, body = sys.argv[1:4]
now = datetime.datetime.now(tz=datetime.timezone.utc)
print(json.dumps({"webhook-id": msg_id,
                  "webhook-timestamp": str(int(now.timestamp())),
                  "webhook-signature": Webhook(secret).sign(msg_id, now, body)}))
"#;

const RECEIVE: &str = r#"
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from standardwebhooks import Webhook
hook = Webhook(sys.argv[1])
class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        try:
            hook.verify(body, dict(self.headers), json_parse=False)
            code = 204
        except Exception:
            code = 401
        self.send_response(code)
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = HTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// The library's signature headers for `body`.
async fn library_signs(python: &str, secret: &str, id: &str, body: &str) -> Vec<(String, String)> {
    let output = tokio::process::Command::new(python)
        .args(["-c", SIGN, secret, id, body])
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let headers: Value = serde_json::from_slice(&output.stdout).unwrap();
    headers
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the reference implementations .ci/run installs"]
async fn deliveries_signed_by_the_official_library_are_accepted_by_webhook_listen() {
    let python = python();
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) =
        crate::webhooks::listen_with("standard-webhooks", dir.path(), SECRET).await;
    let body = r#"{"event": "contract.created", "data": {"bookingNumber": "BN-INTEROP"}}"#;
    let mut statuses = Vec::new();
    for (secret, id) in [
        (SECRET, "msg_interop_1"),
        // Another key: the library's signature must not pass.
        ("whsec_c29tZW9uZS1lbHNlcy1rZXk=", "msg_interop_2"),
    ] {
        let mut request = http_client().post(format!("{url}/hooks")).body(body);
        for (name, value) in library_signs(&python, secret, id, body).await {
            request = request.header(name, value);
        }
        statuses.push(request.send().await.unwrap().status().as_u16());
    }
    child.kill().await.unwrap();
    assert_eq!(statuses, [200, 401]);
    let kept = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
    assert!(
        kept.lines()
            .next()
            .unwrap()
            .contains(r#""verdict":"accepted""#)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the reference implementations .ci/run installs"]
async fn a_receiver_verifying_with_the_official_library_passes_webhook_send() {
    let python = python();
    let (mut receiver, url) = library_receiver(&python).await;
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert_command(
        dir.path(),
        &[
            "webhook",
            "send",
            "--url",
            &url,
            "--scheme",
            "standard-webhooks",
        ],
        None,
    )
    .env("PPCERT_WEBHOOK_SECRET", SECRET)
    .output()
    .await
    .unwrap();
    receiver.kill().await.unwrap();
    let stdout = String::from_utf8_lossy(&finished.stdout);
    assert_eq!(finished.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("valid contract.created"), "{stdout}");
    assert!(stdout.contains("wrong signature"), "{stdout}");
}

/// The official library's receiver on an ephemeral loopback port: its URL.
async fn library_receiver(python: &str) -> (tokio::process::Child, String) {
    let mut receiver = tokio::process::Command::new(python)
        .args(["-c", RECEIVE, SECRET])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(receiver.stdout.take().unwrap()).lines();
    let port = lines.next_line().await.unwrap().unwrap();
    (receiver, format!("http://127.0.0.1:{}/hooks", port.trim()))
}

/// The sandbox's own deliveries (`serve --webhook-url`), signed as the run's staging stand-in
/// signs them, pass the library's verification: its log shows the receiver's 204, not 401.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the reference implementations .ci/run installs"]
async fn the_sandboxs_deliveries_pass_the_official_librarys_verification() {
    let python = python();
    let (_receiver, url) = library_receiver(&python).await;
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--token",
        "interop-serve-token",
        "--webhook-url",
        &url,
        "--webhook-scheme",
        "standard-webhooks",
    ];
    let mut child = ppcert_command(dir.path(), &args, None)
        .env("PPCERT_WEBHOOK_SECRET", SECRET)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = stdout.next_line().await.unwrap().unwrap();
    let base = first.rsplit(' ').next().unwrap().to_string();
    let client = http_client();
    let quote: Value = client
        .post(format!("{base}/quotes"))
        .bearer_auth("interop-serve-token")
        .json(&quote_body(1, 100.0, 30))
        .json_answer()
        .await;
    let reference = quote["data"]["reference"].as_str().unwrap();
    let subscribed = client
        .post(format!("{base}/subscriptions"))
        .bearer_auth("interop-serve-token")
        .json(&subscription_body("WH-INTEROP-1", &[(reference, 1)]))
        .send()
        .await
        .unwrap();
    assert_eq!(subscribed.status(), 201);
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let attempt = loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), stderr.next_line())
            .await
            .expect("a log line for the delivery")
            .unwrap()
            .unwrap();
        if line.contains("booking WH-INTEROP-1 attempt 1") {
            break line;
        }
    };
    child.kill().await.unwrap();
    assert!(attempt.ends_with("→ 204"), "{attempt}");
}

/// The directory holding `@octokit/webhooks-methods` (GitHub's reference implementation):
/// `$PPCERT_TEST_NODE_MODULES`, which `.ci/run` installs and sets; a failure without it.
fn octokit() -> std::path::PathBuf {
    let dir = std::env::var_os("PPCERT_TEST_NODE_MODULES").map(std::path::PathBuf::from);
    dir.filter(|d| d.join("node_modules/@octokit/webhooks-methods").is_dir())
        .expect(
            "@octokit/webhooks-methods is missing; .ci/run installs it (npm install) and sets PPCERT_TEST_NODE_MODULES",
        )
}

/// Runs an ES module script with node from `dir` (so it finds its node_modules).
fn node(dir: &std::path::Path, script: &str, args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("node");
    command
        .current_dir(dir)
        .args(["--input-type=module", "-e", script, "--"])
        .args(args);
    command
}

const GITHUB_SIGN: &str = r#"
import { sign } from "@octokit/webhooks-methods";
const [secret, body] = process.argv.slice(-2);
console.log(await sign(secret, body));
"#;

const GITHUB_RECEIVE: &str = r#"
import http from "node:http";
import { verify } from "@octokit/webhooks-methods";
const secret = process.argv.at(-1);
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const signature = req.headers["x-hub-signature-256"];
    let ok = false;
    try { ok = !!signature && await verify(secret, body, signature); } catch { ok = false; }
    res.writeHead(ok ? 204 : 401, { "content-length": "0" });
    res.end();
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the reference implementations .ci/run installs"]
async fn github_signatures_interoperate_with_octokit_in_both_directions() {
    let modules = octokit();
    let secret = "github-interop-secret";
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = crate::webhooks::listen_with("github", dir.path(), secret).await;
    let body = r#"{"event": "contract.created", "data": {"bookingNumber": "BN-OCTOKIT"}}"#;
    let mut statuses = Vec::new();
    for key in [secret, "someone-elses-secret"] {
        let signed = node(&modules, GITHUB_SIGN, &[key, body])
            .output()
            .await
            .unwrap();
        assert!(
            signed.status.success(),
            "{}",
            String::from_utf8_lossy(&signed.stderr)
        );
        let signature = String::from_utf8_lossy(&signed.stdout).trim().to_string();
        let status = http_client()
            .post(format!("{url}/hooks"))
            .header("x-hub-signature-256", signature)
            .body(body)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        statuses.push(status);
    }
    child.kill().await.unwrap();
    assert_eq!(statuses, [200, 401]);

    let mut receiver = node(&modules, GITHUB_RECEIVE, &[secret])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(receiver.stdout.take().unwrap()).lines();
    let port = lines.next_line().await.unwrap().unwrap();
    let url = format!("http://127.0.0.1:{}/hooks", port.trim());
    let args = ["webhook", "send", "--url", &url, "--scheme", "github"];
    let finished = ppcert_command(dir.path(), &args, None)
        .env("PPCERT_WEBHOOK_SECRET", secret)
        .output()
        .await
        .unwrap();
    receiver.kill().await.unwrap();
    let stdout = String::from_utf8_lossy(&finished.stdout);
    assert_eq!(finished.status.code(), Some(0), "{stdout}");
}

//! `ppcert serve`, the real binary: what it prints is enough to reach the API and its document.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::*;

/// Reads `serve`'s stdout until it has said where the API and the document are.
async fn announced(stdout: tokio::process::ChildStdout) -> (String, String, String) {
    let mut lines = BufReader::new(stdout).lines();
    let (mut base, mut token) = (None, None);
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Some(url) = line.strip_prefix("ppcert sandbox listening on ") {
            base = Some(url.to_string());
        } else if let Some(value) = line.strip_prefix("token: ") {
            token = Some(value.to_string());
        } else if let Some(url) = line.strip_prefix("OpenAPI document: ") {
            return (base.unwrap(), token.unwrap(), url.to_string());
        }
    }
    panic!("serve ended before printing the OpenAPI document's address");
}

/// Starts `ppcert serve ARGS` in `dir`; the child (killed on drop), the API's base URL, the
/// token and the OpenAPI document's address, as it announced them.
pub async fn serving(
    dir: &std::path::Path,
    args: &[&str],
) -> (tokio::process::Child, String, String, String) {
    let mut child = ppcert_command(dir, args, None)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (base, token, document_url) =
        tokio::time::timeout(std::time::Duration::from_secs(30), announced(stdout))
            .await
            .expect("serve announces itself");
    (child, base, token, document_url)
}

#[tokio::test]
async fn serve_prints_where_the_api_and_its_document_are() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--token",
        "serve-token-1234",
        "--path-prefix",
        "/partner-api",
    ];
    let (mut child, base, token, document_url) = serving(dir.path(), &args).await;
    assert!(base.starts_with("http://127.0.0.1:") && base.ends_with("/partner-api"));
    assert_eq!(token, "serve-token-1234");

    let document: Value = http_client().get(&document_url).json_answer().await;
    assert_eq!(document["servers"][0]["url"], "/partner-api");
    let example = openapi_example_quote(&document);
    let reply = crate::common::http_client()
        .post(format!("{base}/quotes"))
        .bearer_auth(&token)
        .json(example)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 201);
    child.kill().await.unwrap();
}

#[tokio::test]
async fn serve_refuses_an_address_beyond_loopback_without_public() {
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert(dir.path(), &["serve", "--addr", "0.0.0.0:0"], None).await;
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    assert!(
        finished.stderr.contains("not a loopback address") && finished.stderr.contains("--public"),
        "{}",
        finished.stderr
    );
}

/// `serve`'s faults answer to the names of `proxy --faults`'s kinds: a client rehearses
/// against the sandbox what the proxy injects on staging.
#[tokio::test]
async fn serve_s_faults_take_the_names_of_the_proxy_s_fault_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["serve", "--addr", "127.0.0.1:0", "--status-429-every", "2"];
    let (mut child, base, token, document_url) = serving(dir.path(), &args).await;
    let document: Value = http_client().get(&document_url).json_answer().await;
    let example = openapi_example_quote(&document).clone();
    let mut statuses = Vec::new();
    for _ in 0..2 {
        let reply = http_client()
            .post(format!("{base}/quotes"))
            .bearer_auth(&token)
            .json(&example)
            .send()
            .await
            .unwrap();
        statuses.push(reply.status().as_u16());
    }
    assert_eq!(statuses, [201, 429]);
    child.kill().await.unwrap();
    for alias in ["--status-503-every", "--lost-answer-every"] {
        let help = ppcert(dir.path(), &["serve", "--help"], None).await;
        assert!(help.stdout.contains(alias), "{alias}");
    }
}

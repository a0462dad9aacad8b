//! Stagings whose transport asks something of the client (issue 39): answers compressed with
//! gzip, a version header on every call, UTC-only dates written with the date filters, HTTPS
//! signed by a private CA, a gateway key read from the environment, and a client certificate.
//! Each is certified with a config alone, and no secret leaks into any file or stream.

use base64::Engine as _;
use ppcert::sandbox::{DeltaShape, Layout, SandboxOptions, TlsIdentity, Transport};

use crate::common::*;

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/fixtures/mtls")
        .join(name)
}

/// The documented UTC example, in a header the evidence shows (`X-Request-Id`).
const UTC_CONFIG: &str = r#"
[target.headers]
X-Api-Version = "2"
X-Request-Id = '{{ booking.number }} {{ flight.departureDate | datetimeformat(format="[year]-[month]-[day]T[hour]:[minute]:[second]Z", tz="UTC") }}'
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_staging_needing_a_version_header_is_certified_with_a_config_alone() {
    let sandbox = sandbox_with(SandboxOptions {
        transport: Transport {
            gzip: true,
            required_headers: vec![("X-Api-Version".into(), "2".into())],
            tls: None,
        },
        layout: Layout {
            price_delta: DeltaShape::String,
            ..Layout::default()
        },
        ..fast_options()
    })
    .await;
    // Without the header the staging's own words say what is missing.
    let (refused, _) = Run::against(&sandbox).scenario("smoke").finish().await;
    assert_ne!(refused.code, 0);
    assert!(
        refused
            .stdout
            .contains("this API needs the header X-Api-Version: 2")
            || refused
                .stderr
                .contains("this API needs the header X-Api-Version: 2"),
        "{}\n{}",
        refused.stdout,
        refused.stderr
    );
    let before = sandbox_counts(&sandbox);
    let (finished, evidence, _dir) = Run::against(&sandbox)
        .config(UTC_CONFIG)
        .args(&["--backoff-ms", "1"])
        .evidence()
        .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    ledger_equals_since(&evidence, &sandbox, &before, false);
    let exchanges = evidence["exchanges"].as_array().unwrap();
    let gzipped = exchanges
        .iter()
        .filter(|e| e["response"]["encoding"] == "gzip")
        .count();
    assert!(gzipped > 20, "answers with a body note gzip: {gzipped}");
    let utc = regex::Regex::new(r"^[A-Z0-9-]+ \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$").unwrap();
    for exchange in exchanges {
        let id = exchange["request"]["headers"]["x-request-id"]
            .as_str()
            .unwrap_or_default();
        assert!(utc.is_match(id), "{id}");
        assert_eq!(
            exchange["request"]["headers"]["accept-encoding"],
            "gzip, deflate, br"
        );
    }
}

/// A TLS sandbox whose certificate the fixtures' private CA signed, requiring a client
/// certificate that CA signed too and the gateway key `key`.
async fn guarded_staging(key: &str) -> ppcert::sandbox::Sandbox {
    sandbox_with(SandboxOptions {
        transport: Transport {
            gzip: true,
            required_headers: vec![("X-Gateway-Key".into(), key.into())],
            tls: Some(TlsIdentity {
                cert_chain_pem: std::fs::read(fixture("server.pem")).unwrap(),
                key_pem: std::fs::read(fixture("server.key")).unwrap(),
                client_ca_pem: Some(std::fs::read(fixture("ca.pem")).unwrap()),
            }),
        },
        ..fast_options()
    })
    .await
}

const GUARDED_CONFIG: &str = r#"
[target]
cacert = "certs/ca.pem"
client_cert = "certs/client.pem"
client_key = "certs/client.key"

[target.headers]
X-Gateway-Key = "{{ env.PPCERT_GATEWAY_KEY }}"
"#;

fn dir_with_certs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("certs")).unwrap();
    for name in ["ca.pem", "client.pem", "client.key"] {
        std::fs::copy(fixture(name), dir.path().join("certs").join(name)).unwrap();
    }
    dir
}

/// Every spelling of `secret` a leak could take.
fn spellings(secret: &str) -> Vec<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let json = serde_json::to_string(secret).unwrap();
    let percent: String = secret
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    vec![
        secret.to_string(),
        b64.encode(secret).trim_end_matches('=').to_string(),
        url.encode(secret),
        json[1..json.len() - 1].replace('/', "\\/"),
        percent.clone(),
        percent.to_lowercase(),
    ]
}

fn assert_nowhere(dir: &std::path::Path, streams: &[&str], secrets: &[String]) {
    let mut texts: Vec<(String, String)> = streams
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("stream {i}"), s.to_string()))
        .collect();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(here) = stack.pop() {
        for entry in std::fs::read_dir(&here).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if !path.starts_with(dir.join("certs")) {
                let bytes = std::fs::read(&path).unwrap();
                texts.push((
                    path.display().to_string(),
                    String::from_utf8_lossy(&bytes).into(),
                ));
            }
        }
    }
    assert!(texts.len() > 6, "the bundle's files were read");
    for (name, text) in &texts {
        for secret in secrets {
            assert!(!text.contains(secret.as_str()), "{name} holds `{secret}`");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_staging_with_a_private_ca_gateway_key_and_client_certificate_is_certified() {
    let key = "gw+key/0123456789=abc";
    let sandbox = guarded_staging(key).await;
    let run = || Run::against(&sandbox).config(GUARDED_CONFIG);

    // The key's variable unset: exit 2 naming it, before anything is sent.
    let dir = dir_with_certs();
    let unset = run().scenario("smoke").finish_in(dir.path()).await;
    assert_eq!(unset.code, 2, "{}", unset.stderr);
    assert!(
        unset.stderr.contains("PPCERT_GATEWAY_KEY")
            && unset.stderr.contains("target.headers.X-Gateway-Key reads"),
        "named by the key in the file: {}",
        unset.stderr
    );
    assert_eq!(sandbox.requests_received(), 0);

    // A wrong key: the gateway's 401 in its words, not a rejected token (exit 3).
    let wrong = run()
        .env("PPCERT_GATEWAY_KEY", "not-the-key-at-all")
        .scenario("smoke")
        .finish_in(dir.path())
        .await;
    assert_eq!(wrong.code, 1, "{}\n{}", wrong.stdout, wrong.stderr);
    let said = format!("{}{}", wrong.stdout, wrong.stderr);
    assert!(said.contains("missing gateway key"), "{said}");
    assert!(!said.contains("token was rejected"), "{said}");
    let checked = ppcert_command(
        dir.path(),
        &[
            "check-token",
            "--base-url",
            &sandbox.base_url(),
            "--config",
            "ppcert.toml",
        ],
        Some(sandbox.token()),
    )
    .env("PPCERT_GATEWAY_KEY", "not-the-key-at-all")
    .output()
    .await
    .unwrap();
    let checked = finished(checked);
    assert_eq!(checked.code, 1, "{}", checked.stderr);
    assert!(
        checked.stderr.contains("not about the token"),
        "{}",
        checked.stderr
    );

    // Without the client certificate the staging refuses the connection.
    let no_cert = GUARDED_CONFIG.replace(
        "client_cert = \"certs/client.pem\"\nclient_key = \"certs/client.key\"\n",
        "",
    );
    let refused = Run::against(&sandbox)
        .config(&no_cert)
        .env("PPCERT_GATEWAY_KEY", key)
        .scenario("smoke")
        .finish_in(dir_with_certs().path())
        .await;
    assert_eq!(refused.code, 4, "{}\n{}", refused.stdout, refused.stderr);

    let dir = dir_with_certs();
    let before = sandbox_counts(&sandbox);
    let (finished, evidence) = run()
        .env("PPCERT_GATEWAY_KEY", key)
        .args(&["--backoff-ms", "1"])
        .evidence_in(dir.path())
        .await;
    assert_eq!(finished.code, 0, "{}\n{}", finished.stdout, finished.stderr);
    ledger_equals_since(&evidence, &sandbox, &before, false);
    let client_key = std::fs::read_to_string(fixture("client.key")).unwrap();
    let key_body: String = client_key
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    let mut secrets = spellings(key);
    secrets.extend(
        client_key
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .map(str::to_string),
    );
    secrets.push(key_body);
    assert_nowhere(dir.path(), &[&finished.stdout, &finished.stderr], &secrets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tls_material_and_forbidden_headers_are_exit_2_naming_them() {
    let dir = dir_with_certs();
    for (config, args, named) in [
        (
            "[target]\nclient_cert = \"certs/client.pem\"\nclient_key = \"certs/ca.pem\"\n",
            vec![],
            "certs/ca.pem",
        ),
        (
            "[target]\nclient_cert = \"certs/missing.pem\"\nclient_key = \"certs/client.key\"\n",
            vec![],
            "missing.pem",
        ),
        (
            "[target]\ncacert = \"certs/client.key\"\n",
            vec![],
            "client.key",
        ),
        (
            "[target.headers]\nAuthorization = \"x\"\n",
            vec![],
            "target.headers.Authorization",
        ),
        ("", vec!["--header", "Host: x"], "--header Host"),
    ] {
        let mut run = Run::at("http://127.0.0.1:9", "tok-0123456789abcdef")
            .config(config)
            .scenario("smoke");
        run = run.args(&args);
        let finished = run.finish_in(dir.path()).await;
        assert_eq!(finished.code, 2, "{config}: {}", finished.stderr);
        assert!(
            finished.stderr.contains(named),
            "{config}: {}",
            finished.stderr
        );
        assert!(
            !finished.stderr.contains("PRIVATE KEY"),
            "{}",
            finished.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_is_not_what_its_content_encoding_says_is_an_error_that_says_so() {
    let base = serve(axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::CREATED,
            [
                ("content-encoding", "gzip"),
                ("content-type", "application/json"),
            ],
            r#"{"data": {"id": "qt_plain_marker", "reference": "QR-1"}}"#,
        )
    }))
    .await;
    let (finished, dir) = Run::at(&base, "tok-0123456789abcdef")
        .scenario("smoke")
        .args(&["--retries", "0"])
        .finish()
        .await;
    assert_ne!(finished.code, 0);
    let said = format!("{}{}", finished.stdout, finished.stderr);
    assert!(said.contains("is not valid gzip"), "{said}");
    assert!(!said.contains("qt_plain_marker"), "{said}");
    let journal = std::fs::read_to_string(dir.path().join("b/journal.jsonl")).unwrap();
    assert!(journal.contains("is not valid gzip"), "{journal}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_certificate_from_a_pkcs12_archive_is_presented() {
    let key = "gw-key-0123456789";
    let sandbox = guarded_staging(key).await;
    let dir = dir_with_certs();
    std::fs::copy(fixture("client.p12"), dir.path().join("certs/client.p12")).unwrap();
    let config = GUARDED_CONFIG.replace(
        "client_cert = \"certs/client.pem\"\nclient_key = \"certs/client.key\"",
        "client_pkcs12 = \"certs/client.p12\"\nclient_pkcs12_password_env = \"PARTNER_P12_PASSWORD\"",
    );
    assert_ne!(config, GUARDED_CONFIG);
    let run = || {
        Run::against(&sandbox)
            .config(&config)
            .env("PPCERT_GATEWAY_KEY", key)
            .scenario("smoke")
    };
    let no_password = run().finish_in(dir.path()).await;
    assert_eq!(no_password.code, 2, "{}", no_password.stderr);
    assert!(
        no_password.stderr.contains("PARTNER_P12_PASSWORD"),
        "{}",
        no_password.stderr
    );
    let wrong = run()
        .env("PARTNER_P12_PASSWORD", "wrong-password")
        .finish_in(dir.path())
        .await;
    assert_eq!(wrong.code, 2, "{}", wrong.stderr);
    assert!(wrong.stderr.contains("client.p12"), "{}", wrong.stderr);
    let passed = run()
        .env("PARTNER_P12_PASSWORD", "p12-pass-0123456789")
        .finish_in(dir.path())
        .await;
    assert_eq!(passed.code, 0, "{}\n{}", passed.stdout, passed.stderr);
    // The archive's path is the file's, as the PEM pair's is: the same config run from
    // another directory finds it.
    let elsewhere = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("ppcert.toml");
    let args = [
        "run",
        "--base-url",
        &sandbox.base_url(),
        "--config",
        config_path.to_str().unwrap(),
        "--scenario",
        "smoke",
        "--out",
        "b",
    ];
    let output = ppcert_command(elsewhere.path(), &args, Some(sandbox.token()))
        .env("PPCERT_GATEWAY_KEY", key)
        .env("PARTNER_P12_PASSWORD", "p12-pass-0123456789")
        .output()
        .await
        .unwrap();
    let from_elsewhere = finished(output);
    assert_eq!(from_elsewhere.code, 0, "{}", from_elsewhere.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_forwards_a_compressed_answer_as_is_and_records_it_decoded() {
    use std::io::Read as _;
    let sandbox = sandbox_with(SandboxOptions {
        transport: Transport {
            gzip: true,
            ..Transport::default()
        },
        ..fast_options()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (mut proxy, url) = crate::proxy::start_proxy(dir.path(), &sandbox.base_url(), &[]).await;
    let answer = http_client()
        .post(format!("{url}/quotes"))
        .bearer_auth(sandbox.token())
        .header("content-type", "application/json")
        .header("accept-encoding", "gzip")
        .body(quote_body(1, 350.0, 40).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 201);
    assert_eq!(
        answer.headers()["content-encoding"],
        "gzip",
        "forwarded as it came"
    );
    let bytes = answer.bytes().await.unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .unwrap();
    let id = serde_json::from_str::<serde_json::Value>(&text).unwrap()["data"]["id"].clone();
    assert!(id.is_string(), "{text}");
    crate::proxy::stop(&mut proxy).await;
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let quote = &evidence["exchanges"][0];
    assert_eq!(quote["response"]["encoding"], "gzip", "{quote}");
    assert_eq!(quote["response"]["body"]["data"]["id"], id, "{quote}");
}

/// An endpoint's own header reading the environment: `validate` does not need the variable,
/// and `run` names it and the key, in words (not a template engine's dump).
#[tokio::test]
async fn an_unset_variable_of_an_endpoint_header_is_named_by_run_not_validate() {
    let config = "[target]\nbase_url = \"http://127.0.0.1:9\"\n\n[endpoints.quote.headers]\nX-Gateway-Key = \"{{ env.PPCERT_TEST_UNSET_KEY }}\"\n";
    let dir = dir_with_config(config);
    let validated = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(validated.code, 0, "{}", validated.stderr);
    let run = ppcert(
        dir.path(),
        &["run", "--no-progress"],
        Some("a-token-of-length"),
    )
    .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "endpoints.quote.headers.X-Gateway-Key reads the environment variable PPCERT_TEST_UNSET_KEY, which is not set"
        ),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("Referenced variables"),
        "{}",
        run.stderr
    );
}

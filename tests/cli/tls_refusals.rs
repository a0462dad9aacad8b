//! A staging that refuses the TLS handshake for want of a client certificate is said to want
//! one, with the flags that give it, by `run`, `probe` and `check-token`: never the private
//! CA's `--cacert` hint, which the user already followed.

use ppcert::sandbox::{SandboxOptions, TlsIdentity, Transport};

use crate::common::*;

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/cli/fixtures/mtls")
        .join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_client_certificate_is_named_in_run_probe_and_check_token() {
    let sandbox = sandbox_with(SandboxOptions {
        transport: Transport {
            tls: Some(TlsIdentity {
                cert_chain_pem: std::fs::read(fixture("server.pem")).unwrap(),
                key_pem: std::fs::read(fixture("server.key")).unwrap(),
                client_ca_pem: Some(std::fs::read(fixture("ca.pem")).unwrap()),
            }),
            ..Transport::default()
        },
        ..fast_options()
    })
    .await;
    let base = sandbox.base_url();
    let ca = fixture("ca.pem").display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let target = ["--base-url", &base, "--cacert", &ca];
    for command in [
        vec!["run", "--scenario", "smoke", "--out", "b"],
        vec!["probe"],
        vec!["check-token"],
    ] {
        let mut args = command.clone();
        args.extend(target);
        // TLS 1.3 ends the client's handshake before the server's alert comes: a loaded
        // machine may see the connection close first, with no words to read. The alert's
        // words, whenever they come, are read as a missing certificate.
        let mut named = false;
        for _ in 0..3 {
            let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
            let said = format!("{}{}", finished.stdout, finished.stderr);
            assert_ne!(finished.code, 0, "{command:?}: {said}");
            assert!(!said.contains("--cacert FILE"), "{command:?}: {said}");
            if said.contains("CertificateRequired") {
                assert!(
                    said.contains("the staging asks for a client certificate: pass it with --cert FILE --key FILE"),
                    "{command:?}: {said}"
                );
                named = true;
                break;
            }
        }
        assert!(named, "{command:?}: the alert never came in three tries");
    }
}

//! The hand-over path: a bundle for a staging that names no partner says so, on the console
//! and in the report, before anyone sends "Unnamed partner" evidence to the provider; and
//! docs/hand-over.md's commands, from a passing run to the package and public key sent, work.

use crate::common::*;

#[tokio::test]
async fn a_staging_run_with_no_partner_name_warns_and_the_report_says_so() {
    let sandbox = sandbox_with(fast_options()).await;
    let run = Run::against(&sandbox).scenario("smoke");
    let (done, evidence, dir) = run.evidence().await;
    assert_eq!(done.code, 0, "{}", done.stderr);
    let warned = |text: &str| text.contains("no partner name");
    assert!(
        evidence["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| warned(w.as_str().unwrap())),
        "{}",
        evidence["warnings"]
    );
    assert!(warned(&done.stdout), "{}", done.stdout);
    let md = std::fs::read_to_string(dir.path().join("b/report.md")).unwrap();
    assert!(warned(&md), "{md}");
    assert_eq!(ppcert(dir.path(), &["verify", "b"], None).await.code, 0);
    // Named, or against the embedded sandbox (never evidence): no warning.
    let named = Run::against(&sandbox)
        .scenario("smoke")
        .args(&["--partner-name", "Acme Travel"]);
    let (_, evidence, _) = named.evidence().await;
    assert!(!evidence["warnings"].to_string().contains("no partner name"));
    let (_, evidence, _) = Run::embedded().scenario("smoke").evidence().await;
    assert!(!evidence["warnings"].to_string().contains("no partner name"));
}

/// docs/hand-over.md, as a partner follows it: its `ppcert.toml` written, every shell line run
/// in order through `sh` (with `~` a fresh home and the staging a sandbox), each exiting 0; the
/// package it ends with verifies with the public key it made, and names the partner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_of_the_hand_over_page_works_in_order() {
    let sandbox = sandbox_with(fast_options()).await;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/hand-over.md");
    let staging = "https://staging.example.com/partner-api";
    let ours = sandbox.base_url();
    std::fs::write(dir.path().join("token"), sandbox.token()).unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_ppcert"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = Vec::new();
    for block in crate::docs::blocks(&page) {
        let text = block.text.replace(staging, &ours);
        match block.language.as_str() {
            "toml" => std::fs::write(dir.path().join("ppcert.toml"), text).unwrap(),
            "sh" => {
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    let output = tokio::process::Command::new("sh")
                        .args(["-c", line])
                        .current_dir(dir.path())
                        .env("HOME", &home)
                        .env("PATH", &path)
                        .env_remove("PPCERT_TOKEN")
                        .env_remove("PPCERT_BASE_URL")
                        .output()
                        .await
                        .unwrap();
                    let done = finished(output);
                    assert_eq!(done.code, 0, "`{line}`:\n{}{}", done.stdout, done.stderr);
                    ran.push((line.to_string(), done));
                }
            }
            other => panic!("hand-over.md:{}: a {other} block", block.line),
        }
    }
    let said = |command: &str| {
        let (_, done) = (ran.iter().find(|(line, _)| line.starts_with(command)))
            .unwrap_or_else(|| panic!("the page runs no `{command}`"));
        done.stdout.clone()
    };
    assert!(said("ppcert run").contains("verdict PASSED"));
    let fingerprint = said("ppcert keygen");
    let fingerprint = fingerprint.trim().rsplit(' ').next().unwrap().to_string();
    assert!(fingerprint.starts_with("SHA256:"), "{fingerprint}");
    assert!(
        said("ppcert verify").contains(&fingerprint),
        "the provider sees the key's fingerprint"
    );
    // The two files the page says to send.
    let package = dir.path().join("reports/release-42.tar.gz");
    let public = home.join(".ppcert/signing-key.pub");
    let verified = ppcert(
        dir.path(),
        &[
            "verify",
            package.to_str().unwrap(),
            "--key",
            public.to_str().unwrap(),
        ],
        None,
    )
    .await;
    assert_eq!(verified.code, 0, "{}", verified.stderr);
    let evidence = read_json(&dir.path().join("reports/release-42/evidence.json"));
    assert_eq!(evidence["run"]["partner"]["name"], "Example Travel");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&home.join(".ppcert")), 0o700);
        assert_eq!(mode(&home.join(".ppcert/signing-key")), 0o600);
    }
}

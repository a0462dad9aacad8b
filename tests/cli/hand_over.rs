//! The hand-over path: a bundle for a staging that names no partner says so, on the console
//! and in the report, before anyone sends "Unnamed partner" evidence to the provider.

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

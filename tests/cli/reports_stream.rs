//! `ppcert report` reads the exchanges from the journal one at a time instead of holding them:
//! every report it renders is byte for byte the run's own, the failures quoted in JUnit and
//! listed in the HTML and Markdown reports included.

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn re_rendered_reports_of_a_failed_run_are_the_runs_own_byte_for_byte() {
    let sandbox = sandbox().await;
    // Every flight cancellation is refused: failed steps, quoted answers, a failures table.
    let dir = dir_with_config(
        "[endpoints.flight_cancellation]\npath = \"/flight-cancellation-reports\"\n",
    );
    let base = sandbox.base_url();
    let extra = ["--seed", "7", "--format", "html,md,junit,ctrf"];
    let args = run_args(&base, "b", &extra);
    let finished = ppcert(dir.path(), &args, Some(sandbox.token())).await;
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let bundle = dir.path().join("b");
    let names = ["report.html", "report.md", "junit.xml", "ctrf.json"];
    let written: Vec<Vec<u8>> = (names.iter())
        .map(|name| std::fs::read(bundle.join(name)).unwrap())
        .collect();
    let junit = String::from_utf8_lossy(&written[2]);
    assert!(
        junit.contains("<failure") && junit.contains("→ HTTP 404"),
        "{junit}"
    );
    // ctrf.json, which a run writes only when asked, is rendered over itself.
    for name in &names[..3] {
        std::fs::remove_file(bundle.join(name)).unwrap();
    }
    let args = ["report", "b", "--format", "html,md,junit,ctrf"];
    let rendered = ppcert(dir.path(), &args, None).await;
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    for (name, written) in names.iter().zip(&written) {
        let again = std::fs::read(bundle.join(name)).unwrap();
        assert!(&again == written, "{name} is not the run's own");
    }
    assert_eq!(ppcert(dir.path(), &["verify", "b"], None).await.code, 0);
}

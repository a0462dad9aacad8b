//! A report that opens at any scale: report.html shows every exchange that did not pass and a
//! bounded sample of passed ones per operation, says what it left out, and so stays small
//! however large the run; evidence.json keeps everything.

use crate::common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_html_shows_a_bounded_sample_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert(
        dir.path(),
        &[
            "run",
            "--out",
            "b",
            "--scale",
            "40",
            "--concurrency",
            "16",
            "--no-progress",
        ],
        None,
    )
    .await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let evidence = read_json(&dir.path().join("b/evidence.json"));
    let total = evidence["exchanges"].as_array().unwrap().len();
    assert!(total > 900, "{total}");
    let html = std::fs::read_to_string(dir.path().join("b/report.html")).unwrap();
    let shown = html.matches("<details class=\"exchange\"").count();
    let per_operation = ppcert::report::view::PASSED_SHOWN_PER_OPERATION;
    let operations = 7;
    assert!(
        shown <= per_operation * operations,
        "{shown} exchanges shown in full"
    );
    assert!(
        html.contains(&format!("Shown in full: {shown} of {total} exchanges")),
        "the report says what it left out"
    );
    assert!(html.contains("evidence.json and journal.jsonl keep all"));
    // Only the first rows of bookings reach the template, but the heading counts them all.
    let bookings = evidence["bookings"].as_array().unwrap().len();
    assert!(
        html.contains(&format!("Bookings ({bookings})")),
        "{bookings}"
    );
    let md = std::fs::read_to_string(dir.path().join("b/report.md")).unwrap();
    assert!(md.contains(&format!("### Bookings ({bookings})")));
    // More bookings than the report lists: the rows stop, the count does not.
    let more = bookings.checked_sub(ppcert::report::view::ROWS_SHOWN);
    let more = more
        .filter(|n| *n > 0)
        .expect("the run makes more bookings than are listed");
    assert!(html.contains(&format!("{more} more bookings in evidence.json")));
    // report.md lists fewer and says where the rest are, as report.html really shows them.
    assert!(
        md.contains(&format!(
            "_{} more bookings: report.html lists the first {}, evidence.json all {bookings}._",
            bookings - 100,
            ppcert::report::view::ROWS_SHOWN
        )),
        "{}",
        &md[md.find("### Bookings").unwrap()..]
    );
    // The sample is bounded by a constant, not by the run: this run's HTML is already far
    // below the 10 MB cap, and a run 25 times larger shows the same number of exchanges.
    assert!(html.len() < 2 * 1024 * 1024, "{} bytes", html.len());
}

/// A run keeps its exchanges slim in memory and reads them back from the journal: the bundle
/// must hold exactly what was exchanged, bodies and headers included, in evidence.json and in
/// the exchanges the reports show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_json_holds_every_exchange_whole_as_the_journal_recorded_it() {
    let sandbox = sandbox_with(ppcert::sandbox::SandboxOptions {
        claim_step: std::time::Duration::from_millis(20),
        ..Default::default()
    })
    .await;
    let (finished, evidence, dir) = run_against(&sandbox, "certification", &["--scale", "2"]).await;
    assert_eq!(finished.code, 0, "{}", finished.stderr);
    let bundle = dir.path().join("bundle");
    // The journal as another tool reads it: JSON lines, an exchange's tagged `type`.
    let journal = std::fs::read_to_string(bundle.join("journal.jsonl")).unwrap();
    let journaled: Vec<serde_json::Value> = journal
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|line| line["type"] == "exchange")
        .map(|mut line| {
            line.as_object_mut().unwrap().remove("type");
            line
        })
        .collect();
    let recorded = evidence["exchanges"].as_array().unwrap();
    assert_eq!(recorded.len(), journaled.len());
    assert_eq!(recorded, &journaled);
    let quote = recorded.iter().find(|x| x["operation"] == "quote").unwrap();
    assert!(
        quote["response"]["body"]["data"]["reference"].is_string(),
        "{quote}"
    );
    assert!(
        quote["request"]["body"]["data"]["trips"].is_array(),
        "{quote}"
    );
    assert!(
        quote["response"]["headers"]["content-type"].is_string(),
        "{quote}"
    );
    assert!(
        quote["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["passed"] == true)
    );
    // Only an answer's body says `productTypes`: the shown exchanges carry their bodies.
    let html = std::fs::read_to_string(bundle.join("report.html")).unwrap();
    assert!(
        html.contains("productTypes"),
        "report.html shows the quotes' answers"
    );
}

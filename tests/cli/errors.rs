//! A failure is one line on stderr, in the words of its cause said once, and the exit code
//! its kind documents: the layers' errors (a key, the journal of a run to resume), a file a
//! flag names, and what a command refuses, each reaching the user through `Failure`.

use crate::common::ppcert;

/// The one line `ppcert` said on stderr, checked to be its only one.
fn said(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line, not a chain: {stderr}");
    lines[0]
}

#[tokio::test]
async fn an_unreadable_file_is_one_line_naming_the_flag_with_its_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["serve", "--tls-cert", "gone.pem", "--tls-key", "gone.key"];
    let finished = ppcert(dir.path(), &args, None).await;
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    let line = said(&finished.stderr);
    assert!(
        line.starts_with("error: --tls-cert gone.pem: cannot read: "),
        "{line}"
    );
    let cause = std::fs::read("no-such-file").unwrap_err().to_string();
    assert_eq!(line.matches(&cause).count(), 1, "the cause once: {line}");
}

#[tokio::test]
async fn a_journal_that_cannot_be_resumed_is_a_usage_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("r")).unwrap();
    let journal = dir.path().join("r/journal.jsonl");
    std::fs::write(&journal, "").unwrap();
    let finished = ppcert(dir.path(), &["run", "--resume", "r"], None).await;
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    assert_eq!(
        said(&finished.stderr),
        "error: r: the journal has no run line to resume"
    );
    // The journal layer's own error, in its words: file and line.
    std::fs::write(&journal, "{\"v\":1}\n").unwrap();
    let finished = ppcert(dir.path(), &["run", "--resume", "r"], None).await;
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    assert!(
        said(&finished.stderr).starts_with("error: r/journal.jsonl:1: not a journal line: "),
        "{}",
        finished.stderr
    );
}

#[tokio::test]
async fn refusals_and_key_errors_keep_their_words_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let finished = ppcert(dir.path(), &["verify", "nothere"], None).await;
    assert_eq!(finished.code, 2, "{}", finished.stderr);
    assert_eq!(
        said(&finished.stderr),
        "error: nothere: no such bundle or package"
    );
    let made = ppcert(dir.path(), &["keygen", "--out", "k"], None).await;
    assert_eq!(made.code, 0, "{}", made.stderr);
    let again = ppcert(dir.path(), &["keygen", "--out", "k"], None).await;
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert_eq!(
        said(&again.stderr),
        "error: k: already exists; ppcert keygen never overwrites a key (choose another --out)"
    );
}

//! Every file ppcert reads from a user or a stranger has a bound and a clear error past it
//! (nothing is read past the bound: `/dev/zero` ends at once), and `[data]` holds a real
//! currency.

use crate::attest::keygen;
use crate::common::*;

#[cfg(unix)]
#[tokio::test]
async fn keys_configs_and_scenarios_past_their_bound_are_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keygen(dir.path(), "key").await;
    let public = public.to_str().unwrap().to_string();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    let big = "# padding\n".repeat(120_000);
    std::fs::write(dir.path().join("big.toml"), &big).unwrap();
    for (args, said) in [
        (
            vec!["verify", "b", "--key", "/dev/zero"],
            "larger than 64 KiB",
        ),
        (
            vec!["sign", "b", "--key", "/dev/zero"],
            "larger than 64 KiB",
        ),
        (vec!["validate", "/dev/zero"], "larger than 1 MiB"),
        (vec!["validate", "big.toml"], "larger than 1 MiB"),
        (
            vec!["run", "--config", "/dev/zero", "--out", "o"],
            "larger than 1 MiB",
        ),
        (
            vec!["run", "--scenario", "big.toml", "--out", "o"],
            "larger than 1 MiB",
        ),
    ] {
        let done = ppcert(dir.path(), &args, None).await;
        assert_eq!(done.code, 2, "{args:?}: {}", done.stderr);
        assert!(done.stderr.contains(said), "{args:?}: {}", done.stderr);
    }
    // The key itself still reads.
    let checked = ppcert(dir.path(), &["verify", "b", "--key", &public], None).await;
    assert!(
        !checked.stderr.contains("larger than"),
        "{}",
        checked.stderr
    );
}

#[tokio::test]
async fn a_journal_line_past_its_bound_is_refused_naming_the_line() {
    let (dir, bundle, public) = crate::attest::signed_run().await;
    // One line of 65 MiB with no end: verify refuses it at the bound, naming the line.
    let journal = bundle.join("journal.jsonl");
    let mut text = std::fs::read(&journal).unwrap();
    text.extend(std::iter::repeat_n(b'x', 65 << 20));
    std::fs::write(&journal, text).unwrap();
    let checked = crate::attest::verify_with(dir.path(), &bundle, &public).await;
    assert_eq!(checked.code, 1, "{}", checked.stdout);
    let said = format!("{}{}", checked.stdout, checked.stderr);
    assert!(
        said.contains("longer than 64 MiB, ppcert's bound for a journal line"),
        "{said}"
    );
}

#[tokio::test]
async fn a_currency_iso_4217_does_not_know_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let smoke = include_str!("../../scenarios/smoke.toml");
    let mine = format!("{smoke}\n[data]\ncurrency = \"XXXX\"\n");
    std::fs::write(dir.path().join("mine.toml"), mine).unwrap();
    let validated = ppcert(dir.path(), &["validate", "mine.toml"], None).await;
    assert_eq!(validated.code, 2, "{}", validated.stdout);
    let said = format!("{}{}", validated.stdout, validated.stderr);
    assert!(said.contains("data.currency = \"XXXX\""), "{said}");
}

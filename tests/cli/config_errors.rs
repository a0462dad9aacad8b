//! A `ppcert.toml` with several mistakes is fixed in one round: `validate` and `run` name
//! every one (file, line, key) and exit 2 before anything is sent; one mistake alone keeps
//! its own words.

use crate::common::*;

/// An unknown key, a value of the wrong type, a value out of bounds and a URL without a
/// scheme, on lines 3, 7, 6 and 2.
const MISTAKES: &str = "[target]\n\
    base_url = \"staging.example.com/partner-api\"\n\
    enviroment = \"staging\"\n\
    \n\
    [run]\n\
    concurrency = 0\n\
    retries = \"two\"\n";

fn every_mistake_is_named(said: &str) {
    let expected = [
        "ppcert.toml: 4 mistakes",
        "  ppcert.toml:2: target.base_url: base URL `staging.example.com/partner-api` has no scheme",
        "  ppcert.toml:3: column 1: target.enviroment: unknown field `enviroment`",
        "  ppcert.toml:6: run.concurrency = 0 is out of bounds (1 to 1024)",
        "  ppcert.toml:7: column 11: run.retries: invalid type: string \"two\", expected u32",
    ];
    let lines: Vec<&str> = said.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.ends_with(expected[0]))
        .unwrap_or_else(|| panic!("no count of the mistakes: {said}"));
    assert!(lines.len() >= start + expected.len(), "{said}");
    for (line, wanted) in lines[start + 1..].iter().zip(&expected[1..]) {
        assert!(line.starts_with(wanted), "{wanted}\n in: {said}");
    }
}

#[tokio::test]
async fn every_mistake_of_a_config_file_is_reported_at_once() {
    let dir = dir_with_config(MISTAKES);
    let checked = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(checked.code, 2, "{}", checked.stderr);
    every_mistake_is_named(&checked.stderr);

    let sandbox = sandbox().await;
    let run = ppcert(dir.path(), &["run", "--out", "b"], Some(sandbox.token())).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    every_mistake_is_named(&run.stderr);
    assert!(!dir.path().join("b").exists(), "nothing was started");
    assert_eq!(sandbox_counts(&sandbox).values().sum::<u64>(), 0);
}

/// One mistake is told as it always was: no count, no key prefix added to serde's words.
#[tokio::test]
async fn a_single_mistake_keeps_its_own_words() {
    let dir = dir_with_config("[target]\nenviroment = \"staging\"\n");
    let checked = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(checked.code, 2, "{}", checked.stderr);
    assert!(
        checked
            .stderr
            .starts_with("error: ppcert.toml:2: column 1: unknown field `enviroment`"),
        "{}",
        checked.stderr
    );
    assert!(!checked.stderr.contains("mistakes"), "{}", checked.stderr);
    // A URL the flags override is the target's to check, in its own words, when it is the
    // file's only mistake.
    let dir = dir_with_config("[target]\nbase_url = \"staging.example.com\"\n");
    let checked = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(checked.code, 0, "{}", checked.stderr);
}

/// `validate` refuses the headers for every call as `run` does, naming the key once and its
/// line; the environment they read is `run`'s to check, so a CI step without the gateway's
/// key still validates the file.
#[tokio::test]
async fn validate_checks_the_headers_for_every_call_but_not_the_environment() {
    let dir = dir_with_config("[target.headers]\nAuthorization = \"Bearer x\"\n");
    let refused = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "ppcert.toml:2: target.headers.Authorization: ppcert sets Authorization itself; it cannot be configured"
        ),
        "{}",
        refused.stderr
    );
    let dir = dir_with_config("[target.headers]\nX-Version = \"{{ nope }}\"\n");
    let undefined = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(undefined.code, 2, "{}", undefined.stderr);
    assert!(
        undefined
            .stderr
            .contains("`nope`: no such variable; the context of quote has beneficiary, booking"),
        "{}",
        undefined.stderr
    );
    let key = "[target.headers]\nX-Gateway-Key = \"{{ env.PPCERT_TEST_UNSET_GATEWAY_KEY }}\"\n";
    let dir = dir_with_config(key);
    let unset = ppcert(dir.path(), &["validate", "ppcert.toml"], None).await;
    assert_eq!(unset.code, 0, "{}", unset.stderr);
}

/// Each of `validate`'s messages is on a line of its own, however many lines the words of
/// one would take (a regex's syntax error draws the pattern and a caret).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_validate_message_is_one_line() {
    let config = "[data]\nbooking_number_pattern = \"[A-Z]{2\"\n\n[endpoints.quote]\npath = \"/q/{{ quote.idd }}\"\n\n[endpoints.read_contracts.wait]\nuntil = \"captured.contract_id is defined\"\n";
    let dir = dir_with_config(config);
    let checked = ppcert(dir.path(), &["validate"], None).await;
    assert_eq!(checked.code, 2, "{}", checked.stderr);
    let lines: Vec<&str> = checked.stderr.lines().collect();
    assert_eq!(lines.len(), 5, "{}", checked.stderr);
    assert!(lines[0].ends_with("3 mistakes"), "{}", checked.stderr);
    for (line, said) in lines[1..4].iter().zip([
        "ppcert.toml:2: data.booking_number_pattern: `[A-Z]{2`: unclosed counted repetition",
        "ppcert.toml:5: endpoints.quote: path: `quote.idd`: no such attribute",
        "ppcert.toml:7",
    ]) {
        assert!(
            line.trim_start().starts_with(said),
            "{line}\n{}",
            checked.stderr
        );
    }
    assert!(
        lines[4].starts_with("error: 1 of 1 file"),
        "{}",
        checked.stderr
    );
}

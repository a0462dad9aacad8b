//! What to try after a failed run or proxy session, read from the evidence alone (so `ppcert
//! report` says it too): failures that look like a dialect mismatch end with the command that
//! would fix it.

use super::Evidence;
use super::model::Verdict;

/// Field names the two built-in dialects spell differently (spec, then provider-docs), and
/// words stagings use for a field they do not know.
const DIALECT_WORDS: [&str; 11] = [
    "client",
    "firstname",
    "lastname",
    "birthdate",
    "customer",
    "birthday",
    "provider docs",
    "not a field",
    "unknown field",
    "unrecognized field",
    "additional properties",
];

/// The failed flows' reasons that name a refused request field; in a proxy session, whose
/// flows are the partner's bookings and never fail, the failed requests' reasons.
fn mismatches(evidence: &Evidence) -> usize {
    let reasons: Vec<&str> = match proxy_session(evidence) {
        false => (evidence.flows.iter())
            .filter_map(|f| f.reason.as_deref())
            .collect(),
        true => (evidence.steps.iter())
            .filter(|s| s.status == crate::record::StepStatus::Failed)
            .filter_map(|s| s.reason.as_deref())
            .chain(
                evidence
                    .in_journal
                    .iter()
                    .flat_map(|j| j.failure_reasons.iter().map(String::as_str)),
            )
            .collect(),
    };
    reasons
        .into_iter()
        .filter(|reason| {
            let lower = reason.to_ascii_lowercase();
            (lower.contains("http 400") || lower.contains("http 422"))
                && DIALECT_WORDS.iter().any(|w| contains_word(&lower, w))
        })
        .count()
}

fn proxy_session(evidence: &Evidence) -> bool {
    evidence.run.scenario_source == super::PARTNER_TRAFFIC
}

/// `word` in `text` not as part of a longer name (`client` but not `clientId`).
fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let inner = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !inner(before) && !inner(after)
    })
}

/// The command that would fix a run whose failures look like a dialect mismatch.
pub(crate) fn next_step(evidence: &Evidence) -> Option<String> {
    if evidence.verdict == Verdict::Passed {
        return None;
    }
    let count = mismatches(evidence);
    if count == 0 {
        return None;
    }
    let dialect = evidence.run.dialect.as_str();
    let other = if dialect == crate::dialect::DEFAULT {
        "provider-docs"
    } else {
        crate::dialect::DEFAULT
    };
    if proxy_session(evidence) {
        let requests = if count == 1 { "request" } else { "requests" };
        return Some(format!(
            "{count} {requests} of your client failed on request fields the staging does not accept, as when it speaks another dialect than `{dialect}`. \
             See which one it speaks: `ppcert probe --write-config ppcert.toml`; then check your client against it: `ppcert proxy --dialect {other}`."
        ));
    }
    let flows = if count == 1 { "flow" } else { "flows" };
    Some(format!(
        "{count} {flows} failed on request fields the staging does not accept, as when it speaks another dialect than `{dialect}`. \
         Try `ppcert run --dialect {other}`, or let probe find the dialect and captures: `ppcert probe --write-config ppcert.toml`, then `ppcert run`."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_matched_whole() {
        assert!(contains_word(
            "expected `customer {...}`, not `client`",
            "client"
        ));
        assert!(!contains_word("the clientid is unknown", "client"));
        assert!(contains_word(
            "'birthdate' is not a field of this api",
            "not a field"
        ));
    }
}

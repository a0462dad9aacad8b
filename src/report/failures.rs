//! The Failures tables of report.html and report.md (so the job summary): every exchange that
//! did not pass, with why in the server's own words, as the terminal and JUnit give them.

use serde::Serialize;

use crate::record::{Exchange, Outcome};

#[derive(Serialize)]
pub(crate) struct Failure {
    pub seq: u64,
    pub flow: String,
    pub step: String,
    pub status: String,
    pub message: String,
}

/// How long a failure's "why" may be in the tables (the job summary included): one readable
/// line; the exchange itself, linked, holds the rest.
pub(super) const WHY_CHARS: usize = 200;

/// Checks that only restate the status, which the server's own words say better.
const STATUS_CHECKS: [&str; 2] = ["status", "the server accepted it"];

/// Why an exchange failed, in the server's own words as the terminal shows them (`HTTP 400:
/// data.client.email: missing field`), then the first other check it failed; cut to
/// [`WHY_CHARS`].
fn why(x: &Exchange) -> String {
    let refused = x.response.as_ref().filter(|r| !r.accepted());
    let server = refused.map(|r| format!("HTTP {}: {}", r.status, r.describe()));
    let failed = x.checks.iter().filter(|c| !c.passed && !c.warning);
    let mut other = failed
        .clone()
        .filter(|c| !STATUS_CHECKS.contains(&c.name.as_str()));
    let mut parts: Vec<String> = server.into_iter().collect();
    parts.extend(other.next().map(|c| format!("{}: {}", c.name, c.detail)));
    if parts.is_empty() {
        let first = failed
            .clone()
            .next()
            .map(|c| format!("{}: {}", c.name, c.detail));
        parts.extend(first.or_else(|| x.error.clone()));
    }
    cut(&parts.join("; "), WHY_CHARS)
}

/// `text` on one line, at most `chars` characters, an ellipsis saying it was cut.
fn cut(text: &str, chars: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= chars {
        return line;
    }
    let kept: String = line.chars().take(chars - 1).collect();
    format!("{}…", kept.trim_end())
}

/// The row of an exchange that did not pass (a retried attempt is not one: its retry is).
pub(super) fn failure(x: &Exchange) -> Option<Failure> {
    (x.outcome != Outcome::Passed && !x.retried).then(|| Failure {
        seq: x.seq,
        flow: x.flow.clone(),
        step: x.step.clone(),
        status: x
            .response
            .as_ref()
            .map_or("no answer".into(), |r| format!("HTTP {}", r.status)),
        message: why(x),
    })
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn a_long_reason_is_one_line_cut_with_an_ellipsis() {
        assert_eq!(cut("a\n  b", 10), "a b");
        let long = "x".repeat(300);
        let shown = cut(&long, 200);
        assert_eq!(shown.chars().count(), 200);
        assert!(shown.ends_with('…'));
    }
}

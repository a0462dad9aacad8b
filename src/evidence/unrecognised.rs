//! The requests a proxy session forwarded that no configured endpoint recognised: counted
//! from their journal lines (the same count in the session's record and in `verify`'s), each
//! distinct request listed once with how often it came, so the evidence agrees with what the
//! staging counted.

use serde::{Deserialize, Serialize};

use crate::console::printable;

/// How many distinct requests the section lists; the count covers every one. A client
/// polling ids the proxy does not know must not grow the record without bound.
const LISTED: usize = 50;

/// How many of the listed requests the one-line description names.
const NAMED: usize = 5;

/// `evidence.json`'s `unrecognised`: present when a proxy session forwarded at least one
/// request it could neither check nor count.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct Unrecognised {
    /// Every such request.
    pub count: usize,
    /// Each distinct method, path and answer, in the order first seen (the first [`LISTED`]).
    pub requests: Vec<UnrecognisedRequest>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct UnrecognisedRequest {
    pub method: String,
    /// The path as the partner sent it, without its query.
    pub path: String,
    /// The upstream's status; `None` when it did not answer.
    pub status: Option<u16>,
    /// How many times this request came with this answer.
    pub count: usize,
}

impl Unrecognised {
    /// Counts one request read from a journal line.
    pub(crate) fn add(&mut self, method: &str, path: &str, status: Option<u16>) {
        self.count += 1;
        let seen = self
            .requests
            .iter()
            .position(|r| r.method == method && r.path == path && r.status == status);
        match seen {
            Some(i) => self.requests[i].count += 1,
            None if self.requests.len() < LISTED => self.requests.push(UnrecognisedRequest {
                method: method.to_string(),
                path: path.to_string(),
                status,
                count: 1,
            }),
            None => {}
        }
    }

    /// The section, when there is anything in it.
    pub(crate) fn section(self) -> Option<Unrecognised> {
        (self.count > 0).then_some(self)
    }

    /// One line for the console, the reports and the warnings: `not recognised: 2 requests
    /// (…): GET /v1/health → 200, …`. The paths are the partner's text: escaped.
    pub(crate) fn describe(&self) -> String {
        let named: Vec<String> = self
            .requests
            .iter()
            .take(NAMED)
            .map(UnrecognisedRequest::describe)
            .collect();
        let listed: usize = self.requests.iter().take(NAMED).map(|r| r.count).sum();
        let more = self.count - listed;
        format!(
            "not recognised: {} {} forwarded without being checked or counted (no configured endpoint matches): {}{}",
            self.count,
            if self.count == 1 {
                "request"
            } else {
                "requests"
            },
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    }
}

impl UnrecognisedRequest {
    fn describe(&self) -> String {
        let answer = self
            .status
            .map_or_else(|| "no answer".to_string(), |s| s.to_string());
        let times = if self.count > 1 {
            format!(" ×{}", self.count)
        } else {
            String::new()
        };
        format!(
            "{} {} → {answer}{times}",
            printable(&self.method),
            printable(&self.path)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_listed_once_each_with_their_count_and_the_rest_counted() {
        let mut section = Unrecognised::default();
        section.add("GET", "/v1/health", Some(200));
        section.add("GET", "/v1/health", Some(200));
        section.add("POST", "/v1/things\n", None);
        assert_eq!(section.count, 3);
        assert_eq!(section.requests.len(), 2);
        assert_eq!(
            section.describe(),
            "not recognised: 3 requests forwarded without being checked or counted (no configured endpoint matches): GET /v1/health → 200 ×2, POST /v1/things\\u{a} → no answer"
        );
        for n in 0..(LISTED + 10) {
            section.add("GET", &format!("/v1/items/{n}"), Some(404));
        }
        assert_eq!(section.requests.len(), LISTED);
        assert_eq!(section.count, 3 + LISTED + 10);
        let line = section.describe();
        assert!(
            line.ends_with(&format!(" and {} more", 3 + LISTED + 10 - 6)),
            "{line}"
        );
        assert_eq!(Unrecognised::default().section(), None);
    }
}

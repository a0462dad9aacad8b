//! `ppcert webhook send`: grades a partner's webhook receiver. It sends valid deliveries (a
//! `contract.created` and a `claim.updated` per status), then hostile ones (forged, unsigned,
//! altered, replayed, malformed, unknown), and checks each answer against what a correct
//! receiver does.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::sample;
use super::scheme::{Scheme, sign};
use crate::models::CLAIM_STATUSES;

/// How long a receiver may take to acknowledge (the sandbox's delivery timeout).
pub(crate) const ACK_WITHIN: Duration = Duration::from_secs(10);

/// What a correct receiver answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expectation {
    /// 2xx within [`ACK_WITHIN`].
    Acknowledged,
    /// Anything but 2xx: the delivery must not be processed.
    Refused,
    /// 2xx or 4xx: any answer but a crash.
    NoServerError,
}

impl Expectation {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Expectation::Acknowledged => "2xx",
            Expectation::Refused => "non-2xx",
            Expectation::NoServerError => "2xx or 4xx",
        }
    }

    fn holds(self, status: u16) -> bool {
        let success = (200..300).contains(&status);
        match self {
            Expectation::Acknowledged => success,
            Expectation::Refused => !success,
            Expectation::NoServerError => status < 500,
        }
    }
}

/// One delivery to send: its headers and body are final (hostile cases are built broken).
pub(crate) struct Case {
    pub name: String,
    pub expectation: Expectation,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    /// What cannot be judged from the answer alone.
    note: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Held,
    Broken(String),
}

pub(crate) struct Graded {
    pub name: String,
    pub expected: &'static str,
    pub answer: String,
    pub verdict: Verdict,
    pub note: Option<&'static str>,
    pub took: Duration,
    /// The receiver answered at all.
    pub reached: bool,
}

fn signed(scheme: Scheme, secret: &[u8], id: &str, body: &[u8]) -> Vec<(&'static str, String)> {
    sign(scheme, secret, id, chrono::Utc::now().timestamp(), body)
}

fn case(
    name: impl Into<String>,
    expectation: Expectation,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
) -> Case {
    Case {
        name: name.into(),
        expectation,
        headers,
        body,
        note: None,
    }
}

/// Every delivery, in the order sent.
pub(crate) fn cases(scheme: Scheme, secret: &[u8]) -> Vec<Case> {
    let mut cases = valid_cases(scheme, secret);
    cases.extend(forged_cases(scheme, secret));
    cases.extend(odd_cases(scheme, secret));
    cases
}

/// A signed delivery of `event` under delivery id `id`.
fn valid(
    scheme: Scheme,
    secret: &[u8],
    id: &str,
    event: Value,
) -> (Vec<(&'static str, String)>, Vec<u8>) {
    let body = event.to_string().into_bytes();
    (signed(scheme, secret, id, &body), body)
}

/// One valid delivery of each event the provider sends, and of each claim status.
fn valid_cases(scheme: Scheme, secret: &[u8]) -> Vec<Case> {
    let (headers, body) = valid(
        scheme,
        secret,
        "msg_ppcert_contract",
        sample::contract_created().to_json(),
    );
    let mut cases = vec![case(
        "valid contract.created",
        Expectation::Acknowledged,
        headers,
        body,
    )];
    for status in CLAIM_STATUSES {
        let id = format!("msg_ppcert_claim_{}", status.to_lowercase());
        let (headers, body) = valid(scheme, secret, &id, sample::claim_updated(status).to_json());
        cases.push(case(
            format!("valid claim.updated {status}"),
            Expectation::Acknowledged,
            headers,
            body,
        ));
    }
    cases
}

fn refunded() -> Vec<u8> {
    sample::claim_updated("REFUNDED")
        .to_json()
        .to_string()
        .into_bytes()
}

/// Deliveries a receiver must refuse: wrong or missing signature, altered body, stale time.
fn forged_cases(scheme: Scheme, secret: &[u8]) -> Vec<Case> {
    let event = refunded();
    let mut cases = vec![case(
        "wrong signature",
        Expectation::Refused,
        signed(
            scheme,
            b"not-the-partner-secret",
            "msg_ppcert_forged",
            &event,
        ),
        event.clone(),
    )];
    let unsigned = if scheme == Scheme::ProviderDocs {
        vec![("webhook-version", "v2".to_string())]
    } else {
        vec![]
    };
    cases.push(case(
        "missing signature",
        Expectation::Refused,
        unsigned,
        event.clone(),
    ));
    let altered = String::from_utf8_lossy(&event)
        .replace("184.5", "18450")
        .into_bytes();
    cases.push(case(
        "body altered after signing",
        Expectation::Refused,
        signed(scheme, secret, "msg_ppcert_altered", &event),
        altered,
    ));
    if scheme == Scheme::StandardWebhooks {
        let old = chrono::Utc::now().timestamp() - 600;
        let headers = sign(scheme, secret, "msg_ppcert_stale", old, &event);
        cases.push(case(
            "timestamp 10 minutes old",
            Expectation::Refused,
            headers,
            event,
        ));
    }
    cases
}

/// Deliveries a receiver must survive: a replay, malformed JSON, an unknown event.
fn odd_cases(scheme: Scheme, secret: &[u8]) -> Vec<Case> {
    let event = refunded();
    let replayed = signed(scheme, secret, "msg_ppcert_replay", &event);
    let mut cases = vec![case(
        "replay (first delivery)",
        Expectation::Acknowledged,
        replayed.clone(),
        event.clone(),
    )];
    let mut replay = case(
        "replay (same delivery again)",
        Expectation::Acknowledged,
        replayed,
        event,
    );
    replay.note = Some("cannot tell from outside whether it was processed twice");
    cases.push(replay);
    let malformed = br#"{"event": "claim.updated", "data": {"claim": "#.to_vec();
    cases.push(case(
        "malformed JSON, correctly signed",
        Expectation::NoServerError,
        signed(scheme, secret, "msg_ppcert_malformed", &malformed),
        malformed,
    ));
    let unknown =
        serde_json::json!({"event": "contract.renamed", "data": {"contract": sample::contract()}});
    let (headers, body) = valid(scheme, secret, "msg_ppcert_unknown", unknown);
    cases.push(case(
        "unknown event name",
        Expectation::Acknowledged,
        headers,
        body,
    ));
    cases
}

/// Sends every case to `url`, one after the other (a replay must follow its original).
pub(crate) async fn grade(client: &reqwest::Client, url: &str, cases: Vec<Case>) -> Vec<Graded> {
    let mut graded = Vec::with_capacity(cases.len());
    for case in cases {
        let mut request = client
            .post(url)
            .timeout(ACK_WITHIN)
            .header("content-type", "application/json")
            .body(case.body);
        for (name, value) in &case.headers {
            request = request.header(*name, value);
        }
        let started = Instant::now();
        let answer = request.send().await;
        let took = started.elapsed();
        let (answer, verdict, reached) = match answer {
            Ok(response) => {
                let status = response.status().as_u16();
                let verdict = if case.expectation.holds(status) {
                    Verdict::Held
                } else {
                    Verdict::Broken(format!(
                        "expected {}, got {status}",
                        case.expectation.describe()
                    ))
                };
                (status.to_string(), verdict, true)
            }
            Err(e) => {
                let why = if e.is_timeout() {
                    format!("no answer within {} s", ACK_WITHIN.as_secs())
                } else {
                    "could not connect".to_string()
                };
                (why.clone(), Verdict::Broken(why), false)
            }
        };
        graded.push(Graded {
            name: case.name,
            expected: case.expectation.describe(),
            answer,
            verdict,
            note: case.note,
            took,
            reached,
        });
    }
    graded
}

/// The table `send` prints: one row per delivery.
pub(crate) fn table(graded: &[Graded]) -> String {
    let width = graded
        .iter()
        .map(|g| g.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "{:width$}  {:10}  {:24}  verdict\n",
        "delivery", "expected", "answer"
    );
    for g in graded {
        let verdict = match (&g.verdict, g.note) {
            (Verdict::Held, None) => "ok".to_string(),
            (Verdict::Held, Some(note)) => format!("ok ({note})"),
            (Verdict::Broken(why), _) => format!("FAILED: {why}"),
        };
        out.push_str(&format!(
            "{:width$}  {:10}  {:24}  {verdict}\n",
            g.name, g.expected, g.answer
        ));
    }
    out
}

/// JUnit: one testsuite, one testcase per delivery.
pub(crate) fn junit(url: &str, graded: &[Graded]) -> std::io::Result<Vec<u8>> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("ppcert webhook send");
    let mut suite = TestSuite::new(format!("webhook receiver {url}"));
    for g in graded {
        let status = match &g.verdict {
            Verdict::Held => TestCaseStatus::success(),
            Verdict::Broken(why) => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(why.clone());
                status
            }
        };
        let mut case = TestCase::new(g.name.clone(), status);
        case.set_time(g.took);
        if let Some(note) = g.note {
            case.set_system_out(note);
        }
        suite.add_test_case(case);
    }
    report.add_test_suite(suite);
    report
        .to_string()
        .map(String::into_bytes)
        .map_err(std::io::Error::other)
}

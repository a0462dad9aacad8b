//! Every failure's exit code, as docs/certify.md documents it, and the cause each one keeps.

use std::error::Error;
use std::io;

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::attest::{BundleError, KeyError};
use crate::config::{ConfigError, ResumeError};
use crate::drift::LoadError;
use crate::endpoints::RenderError;
use crate::engine::token::TokenError;
use crate::error::{
    AfterSending, Failure, FirstCall, Judgement, Outcome, Refusal, RunOutcome, Unverified,
};
use crate::exit_codes;
use crate::journal::ReadError;
use crate::probe::Broken;
use crate::proxy::command::CommandError;
use crate::scenario::FileError;

fn io_error() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, "denied")
}

fn file_error() -> FileError {
    FileError {
        file: "s.toml".into(),
        line: Some(3),
        message: "unknown key".into(),
    }
}

fn render_error() -> RenderError {
    RenderError::NoTemplate(minijinja::Error::new(
        minijinja::ErrorKind::TemplateNotFound,
        "quote",
    ))
}

fn load_error() -> LoadError {
    LoadError::Unreadable("b: cannot read".into())
}

/// Which variant a failure is, numbered: a new variant does not compile here until it is
/// numbered, and the test below fails until it has a sample with its documented code.
fn index(failure: &Failure) -> usize {
    use Failure::*;
    match failure {
        Config(_) => 0,
        File(_) => 1,
        Render(_) => 2,
        Key(_) => 3,
        Bundle(_) => 4,
        Compare(_) => 5,
        Baseline(_) => 6,
        Journal(_) => 7,
        ProbeBroken(_) => 8,
        NoToken(_) => 9,
        Io { .. } => 10,
        JournalNotOpened { .. } => 11,
        Unexportable { .. } => 12,
        Unreadable { .. } => 13,
        Listen { .. } => 14,
        ListenOn { .. } => 15,
        SandboxStart(_) => 16,
        SandboxStopped(_) => 17,
        Encode { .. } => 18,
        NotWritten { .. } => 19,
        ConfigNotWritten { .. } => 20,
        JunitNotWritten { .. } => 21,
        NotSigned(_) => 22,
        AfterSending(_) => 23,
        Refused(_) => 24,
        WebhookSecret(_) => 25,
        Pattern { .. } => 26,
        Dossier(_) => 27,
        Invalid { .. } => 28,
        NotVerified(_) => 29,
        Inconclusive(_) => 30,
        TokenRejected(_) => 31,
        Unreachable(_) => 32,
        ProductionGuard(_) => 33,
        Command(_) => 34,
        Runtime(_) => 35,
    }
}
const VARIANTS: usize = 36;

/// One failure of each variant, with the exit code docs/certify.md gives it.
#[expect(
    clippy::too_many_lines,
    reason = "a table, one sample per variant: splitting it would hide a missing one"
)]
fn samples() -> Vec<(Failure, u8)> {
    let addr: SocketAddr = ([127, 0, 0, 1], 9).into();
    let path = PathBuf::from("out/x");
    vec![
        (ConfigError::TargetWithoutToken.into(), 2),
        (file_error().into(), 2),
        (render_error().into(), 2),
        (KeyError::Exists { path: path.clone() }.into(), 2),
        (
            BundleError::Unlistable {
                dir: path.clone(),
                error: io_error(),
            }
            .into(),
            1,
        ),
        (Failure::Compare(load_error()), 2),
        (Failure::Baseline(load_error()), 2),
        (
            ReadError::Unreadable {
                path: path.clone(),
                source: io_error(),
            }
            .into(),
            2,
        ),
        (Failure::ProbeBroken(Broken::Step("no attempt".into())), 1),
        (
            Failure::NoToken(TokenError::CommandTimedOut {
                name: "vault".into(),
                secs: 30,
            }),
            3,
        ),
        (
            Failure::Io {
                what: "stdout".into(),
                error: io_error(),
            },
            2,
        ),
        (
            Failure::JournalNotOpened {
                path: path.clone(),
                error: io_error(),
            },
            2,
        ),
        (
            Failure::Unexportable {
                name: "b".into(),
                error: BundleError::Unlistable {
                    dir: path.clone(),
                    error: io_error(),
                },
            },
            2,
        ),
        (
            Failure::Unreadable {
                flag: "--tls-cert",
                path: path.clone(),
                error: io_error(),
            },
            2,
        ),
        (
            Failure::Listen {
                flag: "--listen",
                addr,
                error: io_error(),
            },
            2,
        ),
        (
            Failure::ListenOn {
                addr,
                error: io_error(),
            },
            2,
        ),
        (Failure::Runtime(io_error()), 2),
        (Failure::SandboxStart(io_error()), 2),
        (Failure::SandboxStopped(io_error()), 2),
        (
            Failure::Encode {
                what: "cannot write JSON",
                error: io_error().into(),
            },
            2,
        ),
        (
            Failure::NotWritten {
                path: path.clone(),
                error: io_error(),
            },
            6,
        ),
        (
            Failure::ConfigNotWritten {
                path: path.clone(),
                why: "gone".into(),
            },
            6,
        ),
        (
            Failure::JunitNotWritten {
                path,
                error: io_error(),
            },
            6,
        ),
        (Failure::NotSigned(Box::new(Unverified::NoMember.into())), 6),
        (
            Failure::AfterSending(Box::new(Refusal::EmptyDossier.into())),
            6,
        ),
        (Refusal::DiffOperands.into(), 2),
        (CommandError::Missing.into(), 2),
        (Failure::WebhookSecret("empty".into()), 2),
        (
            Failure::Pattern {
                key: "--booking-number-pattern",
                why: "unclosed".into(),
            },
            2,
        ),
        (Failure::Dossier("dossier.json:1: eof".into()), 2),
        (
            Failure::Invalid {
                failed: 1,
                files: 2,
            },
            2,
        ),
        (Unverified::NoMember.into(), 1),
        (Failure::Inconclusive("401, not about the token".into()), 1),
        (Failure::TokenRejected("401".into()), 3),
        (Failure::Unreachable("refused".into()), 4),
        (Failure::ProductionGuard("refused".into()), 5),
        (
            CommandError::NotStarted {
                program: "suite".into(),
                error: io_error(),
            }
            .into(),
            126,
        ),
        (
            CommandError::NotFound {
                program: "suite".into(),
            }
            .into(),
            127,
        ),
    ]
}

#[test]
fn every_variant_maps_to_its_documented_code() {
    let samples = samples();
    let mut seen = [false; VARIANTS];
    for (failure, code) in &samples {
        seen[index(failure)] = true;
        assert_eq!(failure.exit_code(), *code, "{failure:?}");
    }
    let missing: Vec<usize> = (0..VARIANTS).filter(|i| !seen[*i]).collect();
    assert!(missing.is_empty(), "variants with no sample: {missing:?}");
}

#[test]
fn a_wrapped_cause_is_kept_and_said_once() {
    let failure = Failure::NotWritten {
        path: "b/attestation.intoto.json".into(),
        error: io_error(),
    };
    let cause = failure.source().expect("the I/O error is kept");
    assert_eq!(cause.to_string(), "denied");
    assert_eq!(
        failure.to_string(),
        "b/attestation.intoto.json: cannot write: denied"
    );
    // A layer's error is the cause itself, in its own words, and can be had back.
    let failure = Failure::from(ConfigError::TargetWithoutToken);
    let cause = failure.source().expect("the config error is kept");
    assert!(cause.downcast_ref::<ConfigError>().is_some());
    assert_eq!(failure.to_string(), cause.to_string());
    // Down the chain: the JSON error under the resume refusal under the config error.
    let json = serde_json::from_str::<u8>("{").expect_err("not a number");
    let failure = Failure::from(ResumeError::RunLineUnreadable {
        dir: "reports/r1".into(),
        error: json,
    });
    let chain: Vec<&(dyn Error + 'static)> =
        std::iter::successors(failure.source(), |e| (*e).source()).collect();
    assert!(chain[0].downcast_ref::<ConfigError>().is_some());
    assert!(
        (chain.iter()).any(|e| e.downcast_ref::<serde_json::Error>().is_some()),
        "{chain:?}"
    );
    assert!(
        failure
            .to_string()
            .starts_with("reports/r1: the run line is unreadable: "),
        "{failure}"
    );
}

#[test]
fn after_sending_a_usage_error_is_exit_6_never_2() {
    let refused = || {
        Failure::from(Refusal::JunitNotAFile {
            path: "x/r.xml".into(),
        })
    };
    assert_eq!(refused().exit_code(), exit_codes::USAGE);
    let after: Failure = AfterSending::from(refused()).into();
    assert_eq!(after.exit_code(), exit_codes::BUNDLE_NOT_WRITTEN);
    assert_eq!(after.to_string(), refused().to_string(), "same words");
    assert!(after.source().is_some(), "the first failure is kept");
    let key: Failure =
        AfterSending::from(Failure::from(KeyError::Exists { path: "k".into() })).into();
    assert_eq!(key.exit_code(), exit_codes::BUNDLE_NOT_WRITTEN);
    let kept: Failure = AfterSending::from(Failure::TokenRejected("401".into())).into();
    assert_eq!(kept.exit_code(), exit_codes::TOKEN_REJECTED);
}

#[test]
fn every_outcome_maps_to_its_documented_code() {
    use FirstCall::*;
    let cases = [
        // (bundle written, interrupted, first call, passed) → code
        ((true, false, Answered, true), 0),
        ((true, false, Answered, false), 1),
        ((true, false, TokenRejected, false), 3),
        ((true, false, Unreachable, false), 4),
        ((true, false, NotTheApi, false), 4),
        ((true, true, Answered, false), 130),
        ((true, true, TokenRejected, false), 130),
        ((false, false, Answered, true), 6),
        ((false, true, Answered, false), 6),
        ((false, false, TokenRejected, false), 6),
    ];
    for ((bundle_written, interrupted, first_call, passed), code) in cases {
        for regressed in [false, true] {
            let outcome = RunOutcome {
                bundle_written,
                interrupted,
                first_call,
                passed,
                regressed,
            };
            let code = if regressed && code == 0 { 1 } else { code };
            assert_eq!(Outcome::of(&outcome).exit_code(), code, "{outcome:?}");
        }
    }
    // The dossier judges a session that finished; a regression, a lost bundle, a suite's own
    // failure stay what they are.
    assert_eq!(Outcome::NotPassed.with_dossier(true), Outcome::Passed);
    assert_eq!(Outcome::Passed.with_dossier(false), Outcome::NotPassed);
    assert_eq!(Outcome::Regressed.with_dossier(true), Outcome::Regressed);
    assert_eq!(Outcome::BundleNotWritten.with_dossier(true).exit_code(), 6);
    assert_eq!(Outcome::Passed.with_suite(Some(7)).exit_code(), 7);
    assert_eq!(Outcome::BundleNotWritten.with_suite(None).exit_code(), 6);
}

#[test]
fn a_judgement_maps_to_its_documented_code() {
    assert_eq!(Judgement::of(true).exit_code(), 0);
    assert_eq!(Judgement::of(false).exit_code(), 1);
    assert_eq!(Judgement::NothingAnswered.exit_code(), 4);
}

#[test]
fn validate_counts_files_in_words_that_agree_with_the_count() {
    let one = Failure::Invalid {
        failed: 1,
        files: 1,
    };
    let two = Failure::Invalid {
        failed: 1,
        files: 2,
    };
    assert_eq!(one.to_string(), "1 of 1 file has errors");
    assert_eq!(two.to_string(), "1 of 2 files has errors");
    let both = Failure::Invalid {
        failed: 2,
        files: 2,
    };
    assert_eq!(both.to_string(), "2 of 2 files have errors");
}

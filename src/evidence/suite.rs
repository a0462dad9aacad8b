//! The evidence's `command` section (`ppcert proxy -- COMMAND`): which suite ran through the
//! proxy and how it ended, so a bundle of a red job cannot read as a green one. Stored, not
//! re-derived: the journal records traffic, not the suite's process.

use serde::{Deserialize, Serialize};

/// Said in place of an argument that holds (or is) a secret.
pub(crate) const REDACTED: &str = "<redacted>";

/// The partner's suite as it was started and as it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SuiteCommand {
    /// COMMAND's arguments, the program first, each secret replaced by `<redacted>`.
    pub argv: Vec<String>,
    /// Its exit code, when it exited by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did (Unix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// `exited` (by itself), `stopped_when_met` (`--stop-command-when-met`), `interrupted`
    /// (Ctrl-C or SIGTERM reached ppcert), or `unknown` (its status could not be read).
    pub ended: SuiteEnd,
}

/// How the suite ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SuiteEnd {
    Exited,
    StoppedWhenMet,
    Interrupted,
    Unknown,
}

impl SuiteCommand {
    /// Whether the suite failed by itself: a non-zero exit, a signal, or an unreadable status.
    pub(crate) fn failed(&self) -> bool {
        match self.ended {
            SuiteEnd::Exited => self.exit_code != Some(0),
            SuiteEnd::Unknown => true,
            SuiteEnd::StoppedWhenMet | SuiteEnd::Interrupted => false,
        }
    }

    /// The code a failed suite passes on, as a shell reports it: its own, or 128 + N when
    /// signal N ended it; 1 when its status could not be read.
    pub(crate) fn exit_code_passed_on(&self) -> u8 {
        match (self.exit_code, self.signal) {
            (Some(code), _) => u8::try_from(code).unwrap_or(1),
            (None, Some(signal)) => 128u8.saturating_add(u8::try_from(signal).unwrap_or(0)),
            (None, None) => 1,
        }
    }

    /// How it ended in words: `exit 7`, `signal 15`, `its status could not be read`.
    pub(crate) fn exit_words(&self) -> String {
        match (self.exit_code, self.signal) {
            (Some(code), _) => format!("exit {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "its status could not be read".into(),
        }
    }

    /// The command line as a shell would show it (redacted already).
    pub(crate) fn line(&self) -> String {
        self.argv.join(" ")
    }

    /// The reports' banner when the suite failed by itself.
    pub(crate) fn banner(&self) -> Option<String> {
        self.failed().then(|| {
            format!(
                "The partner's suite `{}` failed by itself ({}): the job fails with its code. The verdict below judges only the traffic it sent through the proxy.",
                self.line(),
                self.exit_words()
            )
        })
    }
}

/// Argument names whose value is a secret: `--token X`, `--token=X`, `API_KEY=X`.
const SECRET_WORDS: [&str; 7] = [
    "token", "secret", "password", "passwd", "apikey", "api-key", "api_key",
];

fn names_a_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| name.contains(w))
        || name.ends_with("key")
        || name == "authorization"
}

/// `argv` with every secret replaced: each of `secrets` (the token, the environment's secret
/// values) wherever it appears, the value after or in a flag or `NAME=` that names a secret,
/// and what follows `Bearer ` or `Basic `.
pub(crate) fn redact(argv: &[String], secrets: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(argv.len());
    let mut next_is_secret = false;
    for arg in argv {
        if std::mem::take(&mut next_is_secret) {
            out.push(REDACTED.into());
            continue;
        }
        let mut arg = arg.clone();
        for secret in secrets.iter().filter(|s| s.len() >= 4) {
            arg = arg.replace(secret.as_str(), REDACTED);
        }
        if let Some((name, value)) = arg.split_once('=')
            && !value.is_empty()
            && names_a_secret(name.trim_start_matches('-'))
        {
            arg = format!("{name}={REDACTED}");
        } else if arg.starts_with('-') && names_a_secret(arg.trim_start_matches('-')) {
            next_is_secret = true;
        }
        for scheme in ["Bearer ", "Basic ", "bearer ", "basic "] {
            if let Some(at) = arg.find(scheme) {
                arg = format!("{}{scheme}{REDACTED}", &arg[..at]);
            }
        }
        out.push(arg);
    }
    out
}

/// The values of the environment's variables whose name says they hold a secret
/// (`PPCERT_TOKEN`, `PARTNER_API_KEY`, ...): what a CI job passes a suite its credentials in.
pub(crate) fn environment_secrets() -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, value)| names_a_secret(name) && value.len() >= 8)
        .map(|(_, value)| value)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn secrets_are_redacted_wherever_they_sit_and_nothing_else_is() {
        let secrets = vec!["s3cr3t-t0ken-value".to_string()];
        let redacted = redact(
            &args(
                "npm run test -- --token abc --api-key=xyz API_TOKEN=zzz --url http://x/s3cr3t-t0ken-value -H Authorization:_Bearer_q --verbose",
            ),
            &secrets,
        );
        assert_eq!(
            redacted,
            args(
                "npm run test -- --token <redacted> --api-key=<redacted> API_TOKEN=<redacted> --url http://x/<redacted> -H Authorization:_Bearer_q --verbose"
            )
        );
        let header = redact(&["Authorization: Bearer abc.def".to_string()], &[]);
        assert_eq!(header, ["Authorization: Bearer <redacted>"]);
    }

    #[test]
    fn a_suite_fails_by_itself_on_a_code_or_a_signal_not_when_ppcert_stopped_it() {
        let suite = |ended, exit_code, signal| SuiteCommand {
            argv: args("sh -c exit"),
            exit_code,
            signal,
            ended,
        };
        assert!(suite(SuiteEnd::Exited, Some(7), None).failed());
        assert_eq!(
            suite(SuiteEnd::Exited, Some(7), None).exit_words(),
            "exit 7"
        );
        assert!(!suite(SuiteEnd::Exited, Some(0), None).failed());
        assert!(suite(SuiteEnd::Exited, None, Some(9)).failed());
        assert!(!suite(SuiteEnd::Interrupted, None, Some(2)).failed());
        assert!(suite(SuiteEnd::Exited, Some(0), None).banner().is_none());
    }
}

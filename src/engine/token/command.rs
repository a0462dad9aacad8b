//! `--token-command` / `[auth] command`: runs the program (no shell unless the user names one),
//! with a timeout, and reads a bare token or JSON from what it prints. A failing command is an
//! error naming it, with its stderr (scrubbed of anything it printed as a token).

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncReadExt;

use super::error::TokenError;
use super::rules::lifetime;
use crate::secret::Secret;

/// A command prints a token, not a file's worth of output.
pub(crate) const MAX_OUTPUT: u64 = 64 * 1024;
/// How long the pipes are read after the command ended, when something it started holds them.
const PIPE_GRACE: Duration = Duration::from_millis(500);

pub(super) async fn run(
    argv: &[String],
    timeout: Duration,
) -> Result<(Secret, Option<Duration>), TokenError> {
    let name = &argv[0];
    let mut child = spawn(argv)?;
    let group = child.id();
    let Some(output) = wait_for_output(&mut child, timeout).await else {
        end_group(group);
        return Err(TokenError::CommandTimedOut {
            name: name.clone(),
            secs: timeout.as_secs(),
        });
    };
    if !output.drained {
        end_group(group);
    }
    token_from(name, output)
}

/// Starts the command with its output piped and no input, in a process group of its own.
fn spawn(argv: &[String]) -> Result<tokio::process::Child, TokenError> {
    let name = &argv[0];
    let mut command = tokio::process::Command::new(name);
    command
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own group, so that one signal at the timeout ends all it started too.
    #[cfg(unix)]
    command.process_group(0);
    command
        .spawn()
        .map_err(|error| TokenError::CommandNotStarted {
            name: name.clone(),
            error,
        })
}

/// How a command ended and what its pipes carried (at most [`MAX_OUTPUT`] each).
struct Output {
    status: std::io::Result<std::process::ExitStatus>,
    /// Whether both pipes reached their end; if not, something it started still holds them.
    drained: bool,
    out: Vec<u8>,
    err: Vec<u8>,
}

/// Waits for the command to end and its pipes to drain; `None` when `timeout` passed first.
async fn wait_for_output(child: &mut tokio::process::Child, timeout: Duration) -> Option<Output> {
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let waited = tokio::time::timeout(timeout, async {
        // Both pipes are drained at once, past the cap too: a command that writes much to one
        // must not block on it while its token waits in the other.
        let reading = async {
            tokio::join!(
                capped(stdout.as_mut(), &mut out),
                capped(stderr.as_mut(), &mut err)
            )
        };
        tokio::pin!(reading);
        let exited = tokio::select! {
            _ = &mut reading => None,
            status = child.wait() => Some(status),
        };
        match exited {
            None => (child.wait().await, true),
            // It ended, but something it started may hold the pipes open: what they carried
            // so far is taken after a short grace, not when that ends.
            Some(status) => {
                let drained = tokio::time::timeout(PIPE_GRACE, &mut reading).await;
                (status, drained.is_ok())
            }
        }
    })
    .await;
    let (status, drained) = waited.ok()?;
    Some(Output {
        status,
        drained,
        out,
        err,
    })
}

/// The token a command printed, or why it gave none: it failed (its stderr quoted) or
/// printed nothing that reads as a token.
fn token_from(name: &str, output: Output) -> Result<(Secret, Option<Duration>), TokenError> {
    let named = || name.to_string();
    let out = String::from_utf8_lossy(&output.out).trim().to_string();
    let parsed = parse(&out);
    // Whatever it printed as a token stays out of the message, even when it failed.
    let scrub = |text: &str| match &parsed {
        Some((token, _)) => token.scrub(text),
        None => Secret::new(out.as_str()).scrub(text),
    };
    let stderr = scrub(String::from_utf8_lossy(&output.err).trim());
    let status = output.status.map_err(|error| TokenError::CommandLost {
        name: named(),
        error,
    })?;
    if !status.success() {
        return Err(TokenError::CommandFailed {
            name: named(),
            exit: status
                .code()
                .map_or("a signal".to_string(), |c| format!("exit {c}")),
            // Escaped: a command's words must not repaint the console or forge a line on it.
            stderr: crate::console::printable(tail(&stderr)),
        });
    }
    parsed.ok_or_else(|| TokenError::CommandPrintedNoToken { name: named() })
}

/// What a pipe carried, at most [`MAX_OUTPUT`] of it, into `kept`; the rest is read and
/// dropped.
async fn capped(pipe: Option<&mut (impl tokio::io::AsyncRead + Unpin)>, kept: &mut Vec<u8>) {
    if let Some(pipe) = pipe {
        let _ = pipe.take(MAX_OUTPUT).read_to_end(kept).await;
        let _ = tokio::io::copy(pipe, &mut tokio::io::sink()).await;
    }
}

/// Ends every process of the command's group (it was started as the group's leader).
#[cfg(unix)]
fn end_group(group: Option<u32>) {
    if let Some(pid) = group
        .and_then(|pid| i32::try_from(pid).ok())
        .filter(|p| *p > 0)
    {
        // SAFETY: kill(2) takes plain integers; a negative pid names the group the command
        // leads, which no other process of ours is in.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
fn end_group(_group: Option<u32>) {}

fn parse(out: &str) -> Option<(Secret, Option<Duration>)> {
    if out.starts_with('{') {
        return token_answer(&serde_json::from_str(out).ok()?);
    }
    let token = out.lines().next()?.trim();
    (!token.is_empty() && !token.contains(char::is_whitespace) && out.lines().count() == 1)
        .then(|| (Secret::new(token), None))
}

/// `{"access_token", "expires_in"}` (RFC 6749 §5.1), or a command's `{"access_token" |
/// "token", "expires_in" | "Expiration" | "expires_at"}`.
pub(super) fn token_answer(answer: &Value) -> Option<(Secret, Option<Duration>)> {
    let token = answer["access_token"]
        .as_str()
        .or_else(|| answer["token"].as_str())
        .filter(|t| !t.is_empty())?;
    // Whatever number is sent (1e20, "inf", NaN), the lifetime is clamped, never a panic.
    let lifetime = match &answer["expires_in"] {
        Value::Number(n) => n.as_f64().and_then(lifetime),
        Value::String(s) => s.trim().parse::<f64>().ok().and_then(lifetime),
        _ => None,
    }
    .or_else(|| {
        let at = answer["Expiration"]
            .as_str()
            .or_else(|| answer["expires_at"].as_str())?;
        let at = chrono::DateTime::parse_from_rfc3339(at).ok()?;
        let left = (at.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_milliseconds();
        lifetime(left as f64 / 1000.0)
    });
    Some((Secret::new(token), lifetime))
}

fn tail(text: &str) -> &str {
    let start = text.len().saturating_sub(500);
    &text[text.ceil_char_boundary(start)..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[tokio::test]
    async fn a_bare_token_json_and_failures_are_told_apart() {
        let short = Duration::from_secs(10);
        let (token, life) = run(&argv(&["echo", "tok-123"]), short).await.unwrap();
        assert_eq!((token.expose(), life), ("tok-123", None));
        let json = r#"{"access_token": "tok-9", "expires_in": 4}"#;
        let (token, life) = run(&argv(&["echo", json]), short).await.unwrap();
        assert_eq!(
            (token.expose(), life),
            ("tok-9", Some(Duration::from_secs(4)))
        );
        let failed = run(
            &argv(&["sh", "-c", "echo leaked-tok; echo nope >&2; exit 3"]),
            short,
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&failed, TokenError::CommandFailed { exit, stderr, .. } if exit == "exit 3" && stderr == "nope")
        );
        assert!(
            failed.to_string().contains("`sh` failed (exit 3): nope"),
            "{failed}"
        );
        let missing = run(&argv(&["/no/such/program"]), short).await.unwrap_err();
        assert!(matches!(missing, TokenError::CommandNotStarted { .. }));
        assert!(
            missing.to_string().contains("could not be started"),
            "{missing}"
        );
        // 200 KB on stderr before the token: both pipes are drained at once, nothing blocks.
        let chatty = "head -c 200000 /dev/zero | tr '\\0' x >&2; echo tok-after-noise";
        let (token, _) = run(&argv(&["sh", "-c", chatty]), short).await.unwrap();
        assert_eq!(token.expose(), "tok-after-noise");
        let slow = run(&argv(&["sleep", "5"]), Duration::from_millis(200))
            .await
            .unwrap_err();
        assert!(matches!(slow, TokenError::CommandTimedOut { secs: 0, .. }));
    }
}

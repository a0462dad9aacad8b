//! The process exit codes, a stable contract (docs/design.md): CI scripts branch on them.

/// Every requirement met (or a non-run command succeeded).
pub(crate) const SUCCESS: u8 = 0;
/// The run finished, but a requirement was not met or a step failed; `verify` found a change.
pub(crate) const REQUIREMENT_NOT_MET: u8 = 1;
/// Usage, config or scenario error: nothing was sent.
pub(crate) const USAGE: u8 = 2;
/// The token was rejected (401 on the first call).
pub(crate) const TOKEN_REJECTED: u8 = 3;
/// The target could not be reached.
pub(crate) const UNREACHABLE: u8 = 4;
/// Refused by the production guard: the scenario would create contracts or claims in production.
pub(crate) const PRODUCTION_GUARD: u8 = 5;
/// Requests were sent but the evidence bundle could not be written (disk full, no permission),
/// or signed as `--sign-key` asked:
/// `journal.jsonl` holds what was recorded; `ppcert report DIR` can render it once fixed.
/// Likewise any output asked for after requests went out (`probe --write-config`, `webhook
/// send --junit`): exit 2 always means nothing was sent.
pub(crate) const BUNDLE_NOT_WRITTEN: u8 = 6;
/// `proxy -- COMMAND`: COMMAND exists but could not be started (not executable); as `env`,
/// `timeout` and `docker run` say it.
pub(crate) const COMMAND_NOT_STARTED: u8 = 126;
/// `proxy -- COMMAND`: COMMAND was not found.
pub(crate) const COMMAND_NOT_FOUND: u8 = 127;
/// Interrupted (Ctrl-C); the bundle is still written, marked incomplete.
pub(crate) const INTERRUPTED: u8 = 130;

//! Every environment variable ppcert reads, in one place (besides the ones clap reads for its
//! flags: `PPCERT_BASE_URL`, `PPCERT_PARTNER_NAME`, `PPCERT_SANDBOX_TOKEN`), so what the
//! environment can change is visible at a glance.

use std::ffi::OsString;

/// `CI` set to anything but empty, `false` or `0`: no progress bars.
pub(crate) fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// `NO_COLOR` set and not empty (no-color.org).
pub(crate) fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// `GITHUB_STEP_SUMMARY`: where GitHub Actions collects a job's Markdown summary.
pub(crate) fn step_summary() -> Option<OsString> {
    std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty())
}

/// `PPCERT_TOKEN`, trimmed, when set and not blank.
pub(crate) fn token() -> Option<String> {
    std::env::var("PPCERT_TOKEN")
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// The variable `[auth] client_secret_env` names, when set and not blank.
pub(crate) fn named(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|s| !s.trim().is_empty())
}

/// `PPCERT_WEBHOOK_SECRET`, when set and not blank.
pub(crate) fn webhook_secret() -> Option<String> {
    std::env::var("PPCERT_WEBHOOK_SECRET")
        .ok()
        .filter(|s| !s.trim().is_empty())
}

/// Test-only failpoints (hidden): `PPCERT_TEST_PANIC_IN_FLOW=<flow label>`,
/// `PPCERT_TEST_DIE_BEFORE_STEP_LINE=<flow label>:<step index>`, `PPCERT_TEST_FAIL_BUNDLE=1`
/// and `PPCERT_TEST_SLOW_AFTER_CTRL_C=<ms>` (a listener busy that long after the first Ctrl-C)
/// cause what no outside input can (or only by luck), for the tests of those paths. Only a
/// build with the `failpoints` feature (the test build) reads them.
pub(crate) fn failpoint(name: &str) -> Option<OsString> {
    if cfg!(feature = "failpoints") {
        std::env::var_os(name)
    } else {
        None
    }
}

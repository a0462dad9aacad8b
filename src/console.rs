//! Printing lines to stdout and stderr: a closed pipe (`ppcert ... | head`, a closed stderr)
//! is never a panic that stops a run before its bundle is written.

/// Prints a line to stdout; a closed pipe (`ppcert ... | head`) is not an error worth a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Prints a line to stderr; a closed stderr (`ppcert run 2>&1 | head`) must not stop a run
/// before its bundle is written, as `eprintln!`'s panic would.
macro_rules! tell {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub(crate) use {say, tell};

/// Text from a sender or a server, safe to print on one console line: control characters (newlines,
/// escape sequences), the Unicode line and paragraph separators (which log viewers and
/// Python's `splitlines` break lines at) and bidirectional overrides and marks are written
/// as `\u{..}` escapes.
pub(crate) fn printable(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}');
        let separator = matches!(c, '\u{2028}' | '\u{2029}');
        if c.is_control() || bidi || separator {
            shown.push_str(&c.escape_unicode().to_string());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// `1 flow`, `13 flows`: a count whose noun agrees with it.
pub(crate) fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

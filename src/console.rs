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

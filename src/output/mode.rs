//! How a run talks to the terminal, decided once: bars, lines or quiet, and color.

use std::io::IsTerminal;

use crate::cli::{ColorChoice, OutputArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProgressMode {
    Bars,
    Lines,
    Quiet,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct OutputMode {
    pub progress: ProgressMode,
    pub color: bool,
    pub verbose: bool,
    pub json: bool,
}

impl OutputMode {
    pub(crate) fn decide(args: &OutputArgs) -> OutputMode {
        let ci = crate::env::ci();
        let progress = if args.quiet {
            ProgressMode::Quiet
        } else if !args.no_progress && !ci && std::io::stderr().is_terminal() {
            ProgressMode::Bars
        } else {
            ProgressMode::Lines
        };
        let color = match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !crate::env::no_color() && std::io::stdout().is_terminal(),
        };
        OutputMode {
            progress,
            color: color && !args.json,
            verbose: args.verbose,
            json: args.json,
        }
    }

    /// `text` in the ANSI color `code` when color is on.
    pub(super) fn paint(&self, text: &str, code: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

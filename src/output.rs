//! Terminal output, decided once per run: progress bars only on a terminal (never with `CI`
//! set, `--quiet` or `--no-progress`), plain lines otherwise; results on stdout, progress on
//! stderr; color only when asked or on a terminal without `NO_COLOR`.

mod mode;
mod progress;
mod summary;

pub(crate) use mode::{OutputMode, ProgressMode};
pub(crate) use progress::Progress;
pub(crate) use summary::{summary, summary_json};

//! `journal.jsonl`: one JSON line per exchange and per step event, appended and flushed as the
//! run goes. It is the crash-safe record and the basis of `--resume`.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::record::{Exchange, StepEvent};

pub const FILE_NAME: &str = "journal.jsonl";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// The run's identity: everything needed to regenerate its data on resume.
    Run {
        run: Value,
    },
    Exchange(Box<Exchange>),
    /// A step began: if the run dies before its end, resume knows it may have taken effect.
    StepStarted {
        flow: String,
        step_index: usize,
    },
    Step(StepEvent),
    Resumed {
        at: String,
    },
    End {
        at: String,
        complete: bool,
    },
}

pub struct Journal {
    file: File,
    path: PathBuf,
}

impl Journal {
    /// Creates `dir/journal.jsonl`, or appends to it when resuming.
    pub fn open(dir: &Path, append: bool) -> std::io::Result<Journal> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(FILE_NAME);
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&path)?;
        Ok(Journal { file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one line and flushes it to the OS, so a killed run loses nothing recorded.
    pub fn append(&mut self, line: &Line) -> std::io::Result<()> {
        let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        text.push('\n');
        self.file.write_all(text.as_bytes())?;
        self.file.flush()
    }
}

/// Reads a journal; a torn last line (the run was killed mid-write) is ignored, any other bad
/// line is an error naming its number.
pub fn read(path: &Path) -> Result<Vec<Line>, String> {
    let file = File::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut parsed = Vec::new();
    for (i, text) in lines.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Line>(text) {
            Ok(line) => parsed.push(line),
            Err(_) if i + 1 == lines.len() => break,
            Err(e) => {
                return Err(format!(
                    "{}:{}: not a journal line: {e}",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    Ok(parsed)
}

//! The guide's examples are promises: every TOML block of README.md and docs/ passes
//! `ppcert validate` (and a `ppcert.toml` the schema of `ppcert schema config`), and every `ppcert ...` command line in a shell block names a command and
//! flags that exist, with values of the right kind.

use std::path::{Path, PathBuf};

use clap::Parser;
use clap::error::ErrorKind;
use ppcert::cli::Cli;

use crate::common::*;

/// README.md and every Markdown page under docs/.
pub(crate) fn guide_pages() -> Vec<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![repo.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A fenced block: the page, the line its fence opens on, its language and its text.
pub(crate) struct Block {
    pub(crate) page: String,
    pub(crate) line: usize,
    pub(crate) language: String,
    pub(crate) text: String,
    /// `KIND` of a `<!-- toml: KIND -->` line just above the fence: what file a TOML block
    /// is when it is not a `ppcert.toml` (`scenario`, `faults`).
    pub(crate) kind: Option<String>,
}

/// Fenced blocks at any indentation (list items indent theirs).
pub(crate) fn blocks(page: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(page).unwrap();
    let name = page.file_name().unwrap().to_string_lossy().to_string();
    let mut found = Vec::new();
    let mut open: Option<(usize, String, String, usize)> = None;
    let mut kind = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.take() {
            None if trimmed.starts_with("<!-- toml: ") => {
                let named = trimmed.trim_start_matches("<!-- toml: ");
                kind = Some(named.trim_end_matches("-->").trim().to_string());
            }
            None if trimmed.starts_with("```") => {
                let indent = line.len() - trimmed.len();
                open = Some((
                    index + 1,
                    trimmed[3..].trim().to_string(),
                    String::new(),
                    indent,
                ));
            }
            None if !trimmed.is_empty() => kind = None,
            None => {}
            Some((start, language, body, _)) if trimmed.starts_with("```") => found.push(Block {
                page: name.clone(),
                line: start,
                language,
                text: body,
                kind: kind.take(),
            }),
            Some((start, language, mut body, indent)) => {
                body.push_str(line.get(indent..).unwrap_or(trimmed));
                body.push('\n');
                open = Some((start, language, body, indent));
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_toml_example_in_the_guide_passes_validate() {
    let dir = tempfile::tempdir().unwrap();
    let schema = crate::config_schema::schema(dir.path()).await;
    let mut checked = 0;
    for page in guide_pages() {
        for block in blocks(&page).into_iter().filter(|b| b.language == "toml") {
            let file = dir.path().join(format!(
                "{}-{}.toml",
                block.page.trim_end_matches(".md"),
                block.line
            ));
            std::fs::write(&file, &block.text).unwrap();
            let at = format!("{}:{}", block.page, block.line);
            if block.kind.as_deref() == Some("faults") {
                fault_plan_reads(dir.path(), &file, &block).await;
                checked += 1;
                continue;
            }
            let finished = ppcert(dir.path(), &["validate", file.to_str().unwrap()], None).await;
            assert_eq!(
                finished.code, 0,
                "{at}: this TOML example does not validate:\n{}\n{}{}",
                block.text, finished.stdout, finished.stderr
            );
            // What validate read it as is what the page says it is.
            match block.kind.as_deref() {
                Some("scenario") => assert!(finished.stdout.contains("scenario `"), "{at}"),
                None => {
                    assert!(
                        finished.stdout.contains("config ok"),
                        "{at}: {}",
                        finished.stdout
                    );
                    let errors = crate::config_schema::errors(&schema, &block.text);
                    assert!(
                        errors.is_empty(),
                        "{at}: not valid against `ppcert schema config`: {errors:?}\n{}",
                        block.text
                    );
                }
                Some(other) => panic!("{at}: unknown `<!-- toml: {other} -->`"),
            }
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} TOML examples found");
}

/// A fault plan (`proxy --faults FILE`) is no `ppcert.toml`: it must read as a plan, which a
/// proxy session around `true` shows (a plan that does not read is exit 2 before it listens).
async fn fault_plan_reads(dir: &Path, file: &Path, block: &Block) {
    let out = dir.join(format!("{}-bundle", block.line));
    let args = [
        "proxy",
        "--listen",
        "127.0.0.1:0",
        "--faults",
        file.to_str().unwrap(),
        // A plan with duplicate_webhook needs a receiver; `true` makes no delivery reach it.
        "--webhook-forward",
        "http://127.0.0.1:9/hooks",
        "--out",
        out.to_str().unwrap(),
        "--",
        "true",
    ];
    let finished = ppcert(dir, &args, None).await;
    assert!(
        finished.code != 2 && !finished.stderr.contains("--faults:"),
        "{}:{}: this fault plan does not read:\n{}\n{}",
        block.page,
        block.line,
        block.text,
        finished.stderr
    );
    assert!(
        finished.stderr.contains("fault plan:"),
        "{}",
        finished.stderr
    );
}

/// Splits a command line as a POSIX shell would for the simple lines the guide shows:
/// quotes group, `$(...)` and `$VAR` stay as text.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The ppcert arguments of a shell line, if it runs ppcert: `ppcert ARGS`, `VAR=x ppcert
/// ARGS` or `cargo run --release -- ARGS`; a trailing `# comment`, a redirection or a pipe
/// ends the arguments.
fn ppcert_arguments(line: &str) -> Option<Vec<String>> {
    let words = shell_words(line);
    let operator = |w: &String| {
        w == "#"
            || ["|", "&&", "||", ";"].contains(&w.as_str())
            || w.trim_start_matches(['1', '2']).starts_with('>')
    };
    let words: Vec<String> = words.into_iter().take_while(|w| !operator(w)).collect();
    let start = words
        .iter()
        .position(|w| !w.contains('=') || w.starts_with('-'))?;
    let words = &words[start..];
    match words.first().map(String::as_str) {
        Some("ppcert") => Some(words[1..].to_vec()),
        Some("cargo")
            if words.get(1).map(String::as_str) == Some("run")
                && !words.iter().any(|w| w == "--example") =>
        {
            let dashes = words.iter().position(|w| w == "--")?;
            Some(words[dashes + 1..].to_vec())
        }
        _ => None,
    }
}

/// Logical lines of a shell block: `\` continuations joined, `$ ` prompts dropped.
fn shell_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_prefix("$ ").unwrap_or(line);
        if let Some(continued) = line.strip_suffix('\\') {
            current.push_str(continued);
            current.push(' ');
        } else {
            current.push_str(line);
            lines.push(std::mem::take(&mut current));
        }
    }
    lines
}

#[test]
fn every_ppcert_command_in_the_guide_exists_with_those_flags() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for page in guide_pages() {
        for block in blocks(&page)
            .into_iter()
            .filter(|b| matches!(b.language.as_str(), "sh" | "bash" | "shell" | "console"))
        {
            for line in shell_lines(&block.text) {
                let Some(arguments) = ppcert_arguments(&line) else {
                    continue;
                };
                checked += 1;
                let parsed =
                    Cli::try_parse_from(std::iter::once("ppcert".to_string()).chain(arguments));
                match parsed {
                    Ok(_) => {}
                    Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp) => {}
                    Err(e) => wrong.push(format!(
                        "{}:{}: `{line}`: {}",
                        block.page,
                        block.line,
                        e.to_string().lines().next().unwrap_or_default()
                    )),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 15, "only {checked} ppcert command lines found");
}

#[test]
fn the_guide_pages_link_to_pages_that_exist() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let link = regex::Regex::new(r"\]\(([^)#:]+\.md)(#[^)]*)?\)").unwrap();
    let mut broken = Vec::new();
    for page in guide_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let base = page.parent().unwrap_or(repo);
        for captures in link.captures_iter(&text) {
            let target = base.join(&captures[1]);
            if !target.exists() {
                broken.push(format!("{}: {}", page.display(), &captures[1]));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to missing pages:\n{}",
        broken.join("\n")
    );
}

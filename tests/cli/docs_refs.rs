//! The guide's references are promises too: an anchor (`page.md#anchor`), a section named
//! after a link (`[flows.md](flows.md), "Writes, reads and confirmations"`), a table or section
//! of a page (`the README's captures table`) and a file of the repository (`src/cli.rs`)
//! exist; a test fails naming each that does not.

use std::collections::BTreeSet;
use std::path::Path;

use regex::Regex;

use crate::docs::guide_pages;

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A page's headings, outside fenced blocks.
fn headings(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.push(line.trim_start_matches('#').trim().to_string());
        }
    }
    found
}

/// The page's text outside fenced blocks (a block's `#` comments are not headings, its paths
/// are examples).
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut kept = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

fn read(page: &Path) -> String {
    std::fs::read_to_string(page).unwrap_or_default()
}

/// Lower case, no backquotes, one space between words (a name may wrap across lines).
fn plain(text: &str) -> String {
    let text = text.replace('`', "").to_lowercase();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A path with a placeholder (`dialects/NAME.toml`) names no one file.
fn placeholder(path: &str) -> bool {
    path.split(['/', '.', '-', '_'])
        .any(|part| part.len() > 1 && part.chars().all(|c| c.is_ascii_uppercase()))
}

#[test]
fn every_anchor_section_table_and_file_the_guide_names_exists() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let link = Regex::new(r"\]\(([^)#:\s]*\.md)?#([^)\s]+)\)").unwrap();
    let named = Regex::new(r#"\]\(([^)#:\s]+\.md)\)[,:]? "([^"]+)""#).unwrap();
    let of_page =
        Regex::new(r"(README|[a-z-]+\.md)(?:'s|\s+has\s+a)\s+([a-z][a-z\s]*?)\s+(table|section)\b")
            .unwrap();
    let file = Regex::new(
        r"`((?:src|tests|docs|scenarios|dialects|examples|crates|\.ci|\.github)/[A-Za-z0-9_./-]+|(?:README|BENCHMARKS)\.md|action\.yml|Dockerfile)`",
    )
    .unwrap();
    let mut missing = BTreeSet::new();
    for page in guide_pages() {
        let text = prose(&read(&page));
        let here = page.file_name().unwrap().to_string_lossy().to_string();
        let base = page.parent().unwrap();
        let target = |name: Option<&str>| name.map_or(page.clone(), |n| base.join(n));
        for c in link.captures_iter(&text) {
            let to = target(c.get(1).map(|m| m.as_str()));
            let slugs: Vec<String> = headings(&read(&to)).iter().map(|h| slug(h)).collect();
            if !slugs.contains(&c[2].to_string()) {
                missing.insert(format!("{here}: no heading #{} in {}", &c[2], to.display()));
            }
        }
        for c in named.captures_iter(&text) {
            let to = target(Some(&c[1]));
            let wanted = plain(&c[2]);
            // A heading may go on after the name: `Writes, reads and confirmations: `[…]``.
            let is = |h: &String| plain(h) == wanted || plain(h).starts_with(&format!("{wanted}:"));
            if !headings(&read(&to)).iter().any(is) {
                missing.insert(format!("{here}: no section \"{}\" in {}", &c[2], &c[1]));
            }
        }
        for c in of_page.captures_iter(&text) {
            let name = if &c[1] == "README" {
                "README.md"
            } else {
                &c[1]
            };
            let to = if name == "README.md" {
                repo.join(name)
            } else {
                base.join(name)
            };
            let words = plain(c[2].trim_start_matches("the "));
            let other = prose(&read(&to));
            let holds = other
                .lines()
                .any(|l| (l.starts_with('#') || l.starts_with('|')) && plain(l).contains(&words));
            if !holds {
                missing.insert(format!("{here}: {} has no {words} {}", &c[1], &c[3]));
            }
        }
        let whole = read(&page);
        for c in file.captures_iter(&text) {
            let path = c[1].trim_end_matches(['.', '/']);
            // A file the page itself shows (`# scenarios/conditional.toml` atop a block) is
            // the reader's to write.
            let shown = whole.contains(&format!("# {path}\n"));
            if !placeholder(path) && !shown && !repo.join(path).exists() {
                missing.insert(format!("{here}: no file {path}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the guide names what does not exist:\n{}",
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(
        slug("Writes, reads and confirmations"),
        "writes-reads-and-confirmations"
    );
    assert_eq!(slug("`ppcert.toml` reference"), "ppcerttoml-reference");
    assert_eq!(
        slug("Checking the file in your editor"),
        "checking-the-file-in-your-editor"
    );
}

/// docs/troubleshooting.md quotes the `error:` line a failed command printed (up to its first
/// `…`, `(` or `:` after the words the page shows), so a reader finds it by searching the page.
pub(crate) fn troubleshooting_quotes(printed: &str, words: &str) {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/troubleshooting.md");
    let page = plain(&read(&page));
    let line = (printed.lines())
        .find(|l| l.starts_with("error: ") && l.contains(words))
        .unwrap_or_else(|| panic!("no `error:` line with {words:?}:\n{printed}"));
    assert!(line.starts_with(&format!("error: {words}")), "{line}");
    assert!(
        page.contains(&plain(&format!("\"error: {words}"))),
        "troubleshooting.md does not quote `error: {words}` (printed: {line})"
    );
}

//! Reading a token or a client secret: from a file of one line (refused unread past 64 KiB)
//! or `PPCERT_TOKEN`, never from a plain flag; text a token cannot be is refused plainly.

use crate::cli::TargetArgs;
use crate::secret::Secret;

/// A token with a byte-order mark or a control character was saved or pasted wrongly: said
/// plainly, rather than sent and answered 401.
fn check_token_text(source: &str, token: &str) -> Result<(), String> {
    if token.starts_with('\u{feff}') {
        return Err(format!(
            "{source}: the token starts with a byte-order mark; save it as plain UTF-8 without BOM"
        ));
    }
    if let Some(c) = token.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{source}: the token holds a control character (U+{:04X}); a bearer token is printable text",
            c as u32
        ));
    }
    Ok(())
}

/// A token file larger than this is not a token (a log, a key bundle, a wrong path): it is
/// refused at once instead of being sent, and scrubbed from every record, for minutes.
pub const MAX_TOKEN_FILE: u64 = 64 * 1024;

/// A file's text, refused without reading it all when it is larger than `max` bytes (a
/// pipe or `/dev/zero` included: nothing is read past the limit). `kind` names what the file
/// should be in errors.
fn read_small(path: &std::path::Path, max: u64, kind: &str) -> Result<String, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "larger than {} KiB: this is not a {kind} file",
            max / 1024
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("not UTF-8 text: this is not a {kind} file"))
}

/// A secret file's text, capped as a token file is, but taken as it is (a webhook secret may
/// hold spaces); `what` names it in errors.
pub fn read_secret_text(path: &std::path::Path, what: &str) -> Result<String, String> {
    read_small(path, MAX_TOKEN_FILE, "secret")
        .map_err(|e| format!("{what} {}: {e}", path.display()))
}

/// One secret on one line from `path` (a token file, a client secret file); `what` names it in
/// errors. A file over 64 KiB is refused before it is read whole.
pub fn read_secret_file(path: &std::path::Path, what: &str) -> Result<Secret, String> {
    let shown = format!("{what} {}", path.display());
    let text = read_small(path, MAX_TOKEN_FILE, "token").map_err(|e| format!("{shown}: {e}"))?;
    let token = text.trim_matches(|c: char| c.is_whitespace());
    check_token_text(&shown, token)?;
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(format!("{shown}: expected one token on one line"));
    }
    Ok(Secret::new(token))
}

/// The token: `--token-file` beats `PPCERT_TOKEN`; never taken from a plain flag.
pub fn read_token(args: &TargetArgs) -> Result<Option<Secret>, String> {
    if let Some(path) = &args.token_file {
        return read_secret_file(path, "--token-file").map(Some);
    }
    match crate::env::token() {
        Some(token) => {
            check_token_text("PPCERT_TOKEN", &token)?;
            Ok(Some(Secret::new(token)))
        }
        None => Ok(None),
    }
}

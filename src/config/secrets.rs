//! Reading a token or a client secret: from a file of one line (refused unread past 64 KiB)
//! or `PPCERT_TOKEN`, never from a plain flag; text a token cannot be is refused plainly.

use super::error::{SecretError, SecretProblem};
use crate::cli::TargetArgs;
use crate::secret::Secret;

/// A token with a byte-order mark or a control character was saved or pasted wrongly: said
/// plainly, rather than sent and answered 401.
fn check_token_text(token: &str) -> Result<(), SecretProblem> {
    if token.starts_with('\u{feff}') {
        return Err(SecretProblem::ByteOrderMark);
    }
    match token.chars().find(|c| c.is_control()) {
        Some(c) => Err(SecretProblem::ControlCharacter { code: c as u32 }),
        None => Ok(()),
    }
}

/// A token file larger than this is not a token (a log, a key bundle, a wrong path): it is
/// refused at once instead of being sent, and scrubbed from every record, for minutes.
pub(super) const MAX_TOKEN_FILE: u64 = 64 * 1024;

/// A file's text, refused without reading it all when it is larger than `max` bytes (a
/// pipe or `/dev/zero` included: nothing is read past the limit). `kind` names what the file
/// should be in errors.
fn read_small(
    path: &std::path::Path,
    max: u64,
    kind: &'static str,
) -> Result<String, SecretProblem> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(SecretProblem::Unreadable)?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(SecretProblem::Unreadable)?;
    if bytes.len() as u64 > max {
        return Err(SecretProblem::TooLarge {
            kib: max / 1024,
            kind,
        });
    }
    String::from_utf8(bytes).map_err(|_| SecretProblem::NotUtf8 { kind })
}

/// A secret file's text, capped as a token file is, but taken as it is (a webhook secret may
/// hold spaces); `what` names it in errors.
pub(crate) fn read_secret_text(path: &std::path::Path, what: &str) -> Result<String, SecretError> {
    read_small(path, MAX_TOKEN_FILE, "secret").map_err(|problem| SecretError {
        origin: format!("{what} {}", path.display()),
        problem,
    })
}

/// One secret on one line from `path` (a token file, a client secret file); `what` names it in
/// errors. A file over 64 KiB is refused before it is read whole.
pub(crate) fn read_secret_file(path: &std::path::Path, what: &str) -> Result<Secret, SecretError> {
    let refused = |problem| SecretError {
        origin: format!("{what} {}", path.display()),
        problem,
    };
    let text = read_small(path, MAX_TOKEN_FILE, "token").map_err(refused)?;
    let token = text.trim_matches(|c: char| c.is_whitespace());
    check_token_text(token).map_err(refused)?;
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(refused(SecretProblem::NotOneLine));
    }
    Ok(Secret::new(token))
}

/// The token: `--token-file` beats `PPCERT_TOKEN`; never taken from a plain flag.
pub(super) fn read_token(args: &TargetArgs) -> Result<Option<Secret>, SecretError> {
    if let Some(path) = &args.token_file {
        return read_secret_file(path, "--token-file").map(Some);
    }
    match crate::env::token() {
        Some(token) => {
            check_token_text(&token).map_err(|problem| SecretError {
                origin: "PPCERT_TOKEN".into(),
                problem,
            })?;
            Ok(Some(Secret::new(token)))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_cannot_be_a_token_is_refused_naming_it_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            read_secret_file(&path, "--token-file").unwrap_err()
        };
        let bom = file("bom", "\u{feff}tok".as_bytes());
        assert!(matches!(bom.problem, SecretProblem::ByteOrderMark));
        assert!(bom.origin.starts_with("--token-file ") && bom.origin.ends_with("bom"));
        let tab = file("tab", b"to\x07k");
        assert!(matches!(
            tab.problem,
            SecretProblem::ControlCharacter { code: 7 }
        ));
        assert!(tab.to_string().contains("(U+0007)"), "{tab}");
        assert!(matches!(
            file("two", b"a b").problem,
            SecretProblem::NotOneLine
        ));
        let big = file("big", &vec![b'a'; MAX_TOKEN_FILE as usize + 1]);
        assert!(matches!(
            big.problem,
            SecretProblem::TooLarge { kib: 64, .. }
        ));
        let missing = read_secret_file(&dir.path().join("none"), "--token-file").unwrap_err();
        assert!(matches!(missing.problem, SecretProblem::Unreadable(_)));
    }
}

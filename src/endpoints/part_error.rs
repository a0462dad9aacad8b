//! Why a `[[endpoints.NAME.parts]]` table was refused, as a type: each variant names the key
//! at fault (`field`), so the config's error points at its line, and says why in its words.

use std::path::PathBuf;

/// A part refused when the endpoints compile.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PartError {
    #[error("missing: every part has a name")]
    NoName,
    #[error("missing: a part takes one of body, file or document")]
    NoSource,
    /// `given` are the keys set, in the order body, file, document.
    #[error("a part takes one of body, file or document, not {}", given.join(" and "))]
    SeveralSources { given: Vec<&'static str> },
    #[error("template: {0}")]
    Template(#[source] minijinja::Error),
    #[error("cannot read {}: {error}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error("{} is {size} bytes; a part carries at most {max}", path.display())]
    TooLarge { path: PathBuf, size: u64, max: u64 },
    #[error("`{document}` is no document ppcert generates (known: {})", known.join(", "))]
    UnknownDocument {
        document: String,
        known: &'static [&'static str],
    },
    #[error("`{content_type}` is not a media type")]
    NotAMediaType { content_type: String },
}

impl PartError {
    /// The key of the part at fault.
    pub(crate) fn field(&self) -> &'static str {
        match self {
            PartError::NoName => "name",
            PartError::NoSource | PartError::Template(_) => "body",
            // The second key set is the one too many.
            PartError::SeveralSources { given } => given.get(1).copied().unwrap_or("body"),
            PartError::Unreadable { .. } | PartError::TooLarge { .. } => "file",
            PartError::UnknownDocument { .. } => "document",
            PartError::NotAMediaType { .. } => "content_type",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_names_the_key_at_fault() {
        let path = PathBuf::from("letter.pdf");
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        for (error, field) in [
            (PartError::NoName, "name"),
            (PartError::NoSource, "body"),
            (
                PartError::SeveralSources {
                    given: vec!["body", "document"],
                },
                "document",
            ),
            (
                PartError::Unreadable {
                    path: path.clone(),
                    error: io(),
                },
                "file",
            ),
            (
                PartError::TooLarge {
                    path,
                    size: 9,
                    max: 1,
                },
                "file",
            ),
            (
                PartError::UnknownDocument {
                    document: "receipt".into(),
                    known: &["withdrawal-letter"],
                },
                "document",
            ),
            (
                PartError::NotAMediaType {
                    content_type: "a\nb".into(),
                },
                "content_type",
            ),
        ] {
            assert_eq!(error.field(), field, "{error}");
        }
    }
}

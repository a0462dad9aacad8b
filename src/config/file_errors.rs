//! Every mistake found in a configuration file, reported together.

use crate::scenario::FileError;

/// Every mistake of a `ppcert.toml` (never none), in the file's order: a file with an unknown
/// key, a bad value and a bad URL is fixed in one round, not three.
#[derive(Debug)]
pub struct FileErrors(Vec<FileError>);

impl FileErrors {
    /// `errors` must not be empty.
    pub(super) fn new(errors: Vec<FileError>) -> FileErrors {
        debug_assert!(!errors.is_empty());
        FileErrors(errors)
    }

    pub fn iter(&self) -> impl Iterator<Item = &FileError> {
        self.0.iter()
    }
}

impl From<FileError> for FileErrors {
    fn from(error: FileError) -> FileErrors {
        FileErrors(vec![error])
    }
}

impl std::error::Error for FileErrors {}

/// One mistake in its own words; several under a line counting them, one a line.
impl std::fmt::Display for FileErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [one] => write!(f, "{one}"),
            all => {
                write!(f, "{}: {} mistakes", all[0].file, all.len())?;
                // One message per line: a message of several lines keeps them under its own.
                all.iter().try_for_each(|error| {
                    write!(f, "\n  {}", error.to_string().replace('\n', "\n    "))
                })
            }
        }
    }
}

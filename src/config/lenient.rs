//! Reading a `ppcert.toml` that has mistakes, so every one is reported at once: each section
//! and key is read on its own (serde stops at the first), the keys that are wrong are left
//! out with their error, and the rest is read so its values can be checked too.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

use crate::endpoints::EndpointOverride;

/// A key that cannot be read (its dotted path, `run.retries`) and why.
pub(super) type KeyError = (String, toml::de::Error);

/// Where a key's errors go: under this dotted path, into this list.
pub(super) struct At<'a> {
    /// The key read, dotted from the file's root (`endpoints.quote`).
    pub path: &'a str,
    pub errors: &'a mut Vec<KeyError>,
}

/// A file whose top-level tables are read one at a time.
pub(super) trait Sections: DeserializeOwned + Default {
    /// Reads the table `name` into `self` (see [`lenient`]); false when there is no such
    /// section.
    fn section(&mut self, name: &str, value: &Spanned<DeValue<'_>>, at: At<'_>) -> bool;
}

/// What a file with shape errors (unknown keys, values of the wrong type) still says, and the
/// errors; `Err` for a file that is not TOML at all (nothing after it can be read).
pub(super) fn read<T: Sections>(text: &str) -> Result<(T, Vec<KeyError>), toml::de::Error> {
    let root = DeTable::parse(text)?;
    let mut errors = Vec::new();
    let mut config = T::default();
    for (key, value) in root.get_ref().iter() {
        let name = key.get_ref().as_ref();
        if !config.section(
            name,
            value,
            At {
                path: name,
                errors: &mut errors,
            },
        ) {
            let unknown = only::<T>(root.span(), key, value).err();
            errors.extend(unknown.map(|e| (name.to_string(), e)));
        }
    }
    // In the file's order (a table's keys are read in name order).
    errors.sort_by_key(|(_, e)| e.span().map_or(usize::MAX, |span| span.start));
    Ok((config, errors))
}

/// `[endpoints.*]`: each table read on its own, so a mistake in one leaves the others.
pub(super) fn endpoints(
    value: &Spanned<DeValue<'_>>,
    At { path, errors }: At<'_>,
) -> BTreeMap<String, EndpointOverride> {
    let Some(table) = value.get_ref().as_table() else {
        return lenient(value, At { path, errors });
    };
    table
        .iter()
        .map(|(name, definition)| {
            let name = name.get_ref().to_string();
            let path = format!("{path}.{name}");
            let at = At {
                path: &path,
                errors: &mut *errors,
            };
            let read = lenient(definition, at);
            (name, read)
        })
        .collect()
}

/// `value` read as `T`, leaving out each key that cannot be read (its error collected).
pub(super) fn lenient<T: DeserializeOwned + Default>(
    value: &Spanned<DeValue<'_>>,
    At { path, errors }: At<'_>,
) -> T {
    let whole = match T::deserialize(ValueDeserializer::from(value.clone())) {
        Ok(read) => return read,
        Err(error) => error,
    };
    let Some(table) = value.get_ref().as_table() else {
        errors.push((path.to_string(), whole));
        return T::default();
    };
    let mut kept = DeTable::new();
    let before = errors.len();
    for (key, inner) in table.iter() {
        match only::<T>(value.span(), key, inner) {
            Ok(()) => {
                kept.insert(key.clone(), inner.clone());
            }
            Err(error) => errors.push((format!("{path}.{}", key.get_ref()), error)),
        }
    }
    if errors.len() == before {
        // Wrong as a whole though each key reads (none is, today): say so as serde did.
        errors.push((path.to_string(), whole));
        return T::default();
    }
    let kept = Spanned::new(value.span(), DeValue::Table(kept));
    T::deserialize(ValueDeserializer::from(kept)).unwrap_or_default()
}

/// Whether a table holding `key = value` alone reads as `T`.
fn only<T: DeserializeOwned>(
    span: std::ops::Range<usize>,
    key: &Spanned<std::borrow::Cow<'_, str>>,
    value: &Spanned<DeValue<'_>>,
) -> Result<(), toml::de::Error> {
    let mut one = DeTable::new();
    one.insert(key.clone(), value.clone());
    T::deserialize(ValueDeserializer::from(Spanned::new(
        span,
        DeValue::Table(one),
    )))
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FileConfig;

    /// The sections [`read`] reads one key at a time; any other top-level key is unknown.
    const SECTIONS: [&str; 6] = ["target", "partner", "run", "endpoints", "auth", "data"];

    /// A section added to `FileConfig` must be read key by key here too, or a file using it
    /// with a mistake elsewhere would be told the section is unknown.
    #[test]
    fn every_section_of_the_file_is_read() {
        let mut config = FileConfig::default();
        config.target.headers.insert("X".into(), "1".into());
        config.endpoints.insert("quote".into(), Default::default());
        let table = toml::Table::try_from(&config).unwrap();
        let mut keys: Vec<&str> = table.keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut known = SECTIONS.to_vec();
        known.sort_unstable();
        assert_eq!(keys, known);
    }

    #[test]
    fn each_wrong_key_is_an_error_and_the_rest_is_read() {
        let text = "[target]\nbase_ur = \"x\"\nenvironment = \"staging\"\n[run]\nretries = \"two\"\nconcurrency = 3\n[nonsense]\n";
        let (config, errors) = read::<FileConfig>(text).unwrap();
        let messages: Vec<String> = errors
            .iter()
            .map(|(path, e)| format!("{path}: {}", e.message()))
            .collect();
        assert_eq!(errors.len(), 3, "{messages:?}");
        assert!(
            messages[0].starts_with("target.base_ur: unknown field `base_ur`"),
            "{messages:?}"
        );
        assert!(
            messages[1].starts_with("run.retries: invalid type"),
            "{messages:?}"
        );
        assert!(
            messages[2].starts_with("nonsense: unknown field `nonsense`"),
            "{messages:?}"
        );
        assert_eq!(
            config.target.environment,
            Some(crate::environment::Environment::Staging)
        );
        assert_eq!(config.run.concurrency, Some(3));
        assert!(read::<FileConfig>("[target\n").is_err());
    }
}

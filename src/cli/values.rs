//! Flag values clap's own parsers cannot check (sizes, instants, webhook URLs), each refusal
//! naming the value as given; clap prefixes the flag.

/// A flag's value refused.
#[derive(Debug, thiserror::Error)]
pub(super) enum ValueError {
    #[error("`{value}` is not a size (e.g. 1048576, 512KiB, 8MiB)")]
    NotASize { value: String },
    #[error("`{value}`: unknown unit (use KiB or MiB)")]
    UnknownUnit { value: String },
    /// Zero, or more than a `usize` holds.
    #[error("`{value}` is out of range")]
    SizeOutOfRange { value: String },
    #[error("`{value}` is not an RFC 3339 date-time with offset: {error}")]
    NotAnInstant {
        value: String,
        error: chrono::ParseError,
    },
    #[error("`{value}` is not a URL: {error}")]
    NotAUrl {
        value: String,
        error: url::ParseError,
    },
    #[error("`{scheme}:` URLs cannot receive webhooks; use http or https")]
    NotWebScheme { scheme: String },
}

/// `1048576`, `512KiB`, `8MiB` (also `K`, `KB`, `M`, `MB`: powers of 1024 all).
pub(super) fn parse_size(value: &str) -> Result<usize, ValueError> {
    let given = || value.to_string();
    let text = value.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: usize = number
        .parse()
        .map_err(|_| ValueError::NotASize { value: given() })?;
    let factor = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        _ => return Err(ValueError::UnknownUnit { value: given() }),
    };
    number
        .checked_mul(factor)
        .filter(|n| *n > 0)
        .ok_or_else(|| ValueError::SizeOutOfRange { value: given() })
}

pub(super) fn parse_instant(value: &str) -> Result<chrono::DateTime<chrono::Utc>, ValueError> {
    chrono::DateTime::parse_from_rfc3339(value)
        .map(|at| at.with_timezone(&chrono::Utc))
        .map_err(|error| ValueError::NotAnInstant {
            value: value.to_string(),
            error,
        })
}

pub(super) fn webhook_url(value: &str) -> Result<url::Url, ValueError> {
    let url = url::Url::parse(value).map_err(|error| ValueError::NotAUrl {
        value: value.to_string(),
        error,
    })?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(ValueError::NotWebScheme {
            scheme: other.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_powers_of_1024_and_a_refusal_says_why() {
        assert_eq!(parse_size("512KiB").unwrap(), 512 << 10);
        assert_eq!(parse_size(" 8 MB ").unwrap(), 8 << 20);
        assert!(matches!(
            parse_size("8GiB"),
            Err(ValueError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_size("MiB"),
            Err(ValueError::NotASize { .. })
        ));
        assert!(matches!(
            parse_size("0"),
            Err(ValueError::SizeOutOfRange { .. })
        ));
        assert!(matches!(
            webhook_url("ftp://x.example/hooks"),
            Err(ValueError::NotWebScheme { scheme }) if scheme == "ftp"
        ));
        assert!(matches!(
            parse_instant("2024-01-01"),
            Err(ValueError::NotAnInstant { .. })
        ));
    }
}

//! The rules a base URL must meet, wherever it is given (`--base-url`, `PPCERT_BASE_URL`,
//! `[target] base_url`, a resumed run's record): a leaf, so checking the file can use them.

use reqwest::Url;

/// `--base-url`, `PPCERT_BASE_URL` or `[target] base_url` refused, as given.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BaseUrlError {
    #[error("base URL `{raw}` has no scheme; did you mean `https://{}`?", raw.trim())]
    NoScheme { raw: String },
    #[error("base URL `{raw}`: {error}")]
    Unparsable { raw: String, error: url::ParseError },
    /// ppcert reads hosts without Unicode tables (see Cargo.toml's `idna_adapter`).
    #[error(
        "base URL `{raw}`: the host must be ASCII; give an internationalised name in its xn-- form"
    )]
    NonAsciiHost { raw: String },
    #[error("base URL `{raw}`: http:// is accepted only for loopback targets; use https://")]
    PlainHttp { raw: String },
    #[error("base URL `{raw}`: unsupported scheme `{scheme}`")]
    Scheme { raw: String, scheme: String },
    #[error("base URL `{raw}`: no credentials, query or fragment allowed")]
    Extras { raw: String },
}

/// A refused base URL as an error may quote it: credentials before the host and the query
/// (where an API key often rides) are redacted, since errors reach CI logs.
fn shown(raw: &str) -> String {
    let redacted = crate::secret::REDACTED;
    let mut text = raw.to_string();
    let authority = text.find("://").map_or(0, |i| i + 3);
    let host_end = text[authority..]
        .find(['/', '?', '#'])
        .map_or(text.len(), |i| authority + i);
    if let Some(at) = text[authority..host_end].rfind('@') {
        text.replace_range(authority..authority + at, redacted);
    }
    if let Some(query) = text.find('?') {
        let end = text[query..].find('#').map_or(text.len(), |i| query + i);
        text.replace_range(query + 1..end, redacted);
    }
    text
}

/// `http://` is accepted only for loopback targets; the URL keeps its path prefix.
pub(super) fn parse_base_url(raw: &str) -> Result<Url, BaseUrlError> {
    let given = || shown(raw);
    let url = Url::parse(raw.trim()).map_err(|error| match error {
        url::ParseError::RelativeUrlWithoutBase => BaseUrlError::NoScheme { raw: given() },
        url::ParseError::IdnaError => BaseUrlError::NonAsciiHost { raw: given() },
        error => BaseUrlError::Unparsable {
            raw: given(),
            error,
        },
    })?;
    let loopback = crate::environment::is_loopback(&url);
    match url.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => return Err(BaseUrlError::PlainHttp { raw: given() }),
        other => {
            let scheme = other.to_string();
            return Err(BaseUrlError::Scheme {
                raw: given(),
                scheme,
            });
        }
    }
    if url.query().is_some()
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(BaseUrlError::Extras { raw: given() });
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hosts are read without Unicode tables: the xn-- form passes, the Unicode one is
    /// refused saying what to give instead.
    #[test]
    fn an_internationalised_host_is_given_in_its_ascii_form() {
        assert!(parse_base_url("https://xn--bcher-kva.example/api").is_ok());
        let refused = parse_base_url("https://bücher.example/api").unwrap_err();
        assert!(
            matches!(refused, BaseUrlError::NonAsciiHost { .. }),
            "{refused}"
        );
        assert!(refused.to_string().contains("xn-- form"), "{refused}");
    }
}

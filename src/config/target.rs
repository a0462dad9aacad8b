//! Where a command sends its requests and with which token: a remote target holds its token,
//! so no code path can reach staging without one or pass one to the embedded sandbox.

use reqwest::Url;

use super::auth::TokenSource;
pub(super) use super::base_url::parse_base_url;
use super::error::{BaseUrlError, ConfigError};
use super::file::FileConfig;
use crate::cli::TargetArgs;
pub(crate) use crate::environment::Environment;
#[cfg(test)]
use crate::secret::Secret;

/// Where requests go. `Token` is a [`TokenSource`] for commands that authenticate themselves,
/// and `()` for the proxy, whose partner client brings its own.
#[derive(Debug, Clone)]
pub(crate) enum Target<Token = TokenSource> {
    /// The embedded sandbox, started for this command on an ephemeral loopback port.
    Embedded,
    Remote {
        base_url: Url,
        environment: Environment,
        token: Token,
    },
}

/// A target as the proxy sees it: no token of its own.
pub(crate) type Upstream = Target<()>;

impl<Token> Target<Token> {
    pub(crate) fn environment(&self) -> Environment {
        match self {
            Target::Embedded => Environment::Sandbox,
            Target::Remote { environment, .. } => *environment,
        }
    }

    pub(crate) fn is_embedded(&self) -> bool {
        matches!(self, Target::Embedded)
    }
}

/// The target from flags and file, with the token it needs. A token with no target is a CI
/// job whose base URL went missing: passing it against the embedded sandbox would make a
/// release gate pass without reaching staging, so it is refused.
pub(crate) fn target(args: &TargetArgs, file: &FileConfig) -> Result<Target, ConfigError> {
    with_token(
        upstream(args, file)?,
        super::auth::token_source(args, file)?,
    )
}

/// Gives a remote target its token source; refuses either one without the other.
pub(super) fn with_token(
    target: Upstream,
    token: Option<TokenSource>,
) -> Result<Target, ConfigError> {
    match (target, token) {
        (Target::Embedded, None) => Ok(Target::Embedded),
        (Target::Embedded, Some(_)) => Err(ConfigError::TokenWithoutTarget),
        (Target::Remote { .. }, None) => Err(ConfigError::TargetWithoutToken),
        (
            Target::Remote {
                base_url,
                environment,
                ..
            },
            Some(token),
        ) => Ok(Target::Remote {
            base_url,
            environment,
            token,
        }),
    }
}

/// The target alone: flag, else file, else the embedded sandbox; staging unless told.
pub(crate) fn upstream(args: &TargetArgs, file: &FileConfig) -> Result<Upstream, BaseUrlError> {
    let raw = args
        .base_url
        .clone()
        .or_else(|| file.target.base_url.clone());
    let Some(raw) = raw else {
        return Ok(Target::Embedded);
    };
    Ok(Target::Remote {
        base_url: parse_base_url(&raw)?,
        environment: args
            .environment
            .or(file.target.environment)
            .unwrap_or(Environment::Staging),
        token: (),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_target_needs_a_token_and_the_sandbox_takes_none() {
        let remote = || Target::Remote {
            base_url: parse_base_url("https://staging.example").unwrap(),
            environment: Environment::Staging,
            token: (),
        };
        let token = || Some(TokenSource::from(Secret::new("tok")));
        assert!(matches!(
            with_token(remote(), token()),
            Ok(Target::Remote { token: TokenSource::Static { token, .. }, .. }) if token.fingerprint() == Secret::new("tok").fingerprint()
        ));
        assert!(with_token(Target::Embedded, None).unwrap().is_embedded());
        assert!(matches!(
            with_token(Target::Embedded, token()),
            Err(ConfigError::TokenWithoutTarget)
        ));
        assert!(matches!(
            with_token(remote(), None),
            Err(ConfigError::TargetWithoutToken)
        ));
    }

    #[test]
    fn plain_http_is_for_loopback_only() {
        assert!(parse_base_url("http://127.0.0.1:8080/api").is_ok());
        assert!(parse_base_url("http://localhost").is_ok());
        assert!(matches!(
            parse_base_url("http://staging.example"),
            Err(BaseUrlError::PlainHttp { raw }) if raw == "http://staging.example"
        ));
        assert!(matches!(
            parse_base_url("https://u:p@staging.example"),
            Err(BaseUrlError::Extras { .. })
        ));
        assert!(matches!(
            parse_base_url("ftp://staging.example"),
            Err(BaseUrlError::Scheme { scheme, .. }) if scheme == "ftp"
        ));
        let bare = parse_base_url(" staging.example").unwrap_err();
        assert!(matches!(bare, BaseUrlError::NoScheme { .. }));
        assert_eq!(
            bare.to_string(),
            "base URL ` staging.example` has no scheme; did you mean `https://staging.example`?"
        );
    }

    #[test]
    fn a_refused_base_url_never_quotes_its_credentials_or_query() {
        for (raw, shown) in [
            (
                "https://user:s3cret@staging.example/api",
                "https://<redacted>@staging.example/api",
            ),
            (
                "https://staging.example/api?api_key=s3cret#x",
                "https://staging.example/api?<redacted>#x",
            ),
            (
                "http://user:s3cret@staging.example",
                "http://<redacted>@staging.example",
            ),
            ("staging.example?key=s3cret", "staging.example?<redacted>"),
        ] {
            let error = parse_base_url(raw).unwrap_err().to_string();
            assert!(!error.contains("s3cret"), "{error}");
            assert!(error.contains(shown), "{error}");
        }
    }
}

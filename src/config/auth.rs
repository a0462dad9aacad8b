//! Where the staging token comes from: a static token (`PPCERT_TOKEN` or `--token-file`, the
//! file read again when the token is rejected), OAuth 2.0 client credentials (`[auth]
//! token_url`, RFC 6749 §4.4), or a command that prints one (`[auth] command` or
//! `--token-command`, AWS's `credential_process` convention). The source is described in the
//! evidence; the tokens it issues never are.

use std::path::PathBuf;
use std::time::Duration;

use super::error::{AuthError, ConfigError};
use super::file::FileConfig;
pub(crate) use super::file::{AuthSection, ClientAuth};
use crate::cli::TargetArgs;
use crate::secret::Secret;

/// OAuth 2.0 client credentials.
#[derive(Debug, Clone)]
pub(crate) struct ClientCredentials {
    pub token_url: url::Url,
    pub client_id: String,
    pub client_secret: Secret,
    pub scope: Option<String>,
    pub audience: Option<String>,
    pub client_auth: ClientAuth,
}

/// Where tokens come from.
#[derive(Debug, Clone)]
pub(crate) enum TokenSource {
    /// One token; `file` is read again when the token is rejected (a rotating file).
    Static {
        token: Secret,
        file: Option<PathBuf>,
    },
    ClientCredentials(ClientCredentials, Duration),
    /// The program and its arguments (no shell unless the user writes one).
    Command(Vec<String>, Duration),
}

impl TokenSource {
    /// What the evidence and `--resume` know of the source: never a token or a secret.
    pub(crate) fn describe(&self) -> String {
        match self {
            // The same file however it is named on the command line.
            TokenSource::Static {
                file: Some(path), ..
            } => format!(
                "token file {}",
                std::fs::canonicalize(path)
                    .unwrap_or_else(|_| path.clone())
                    .display()
            ),
            TokenSource::Static { file: None, .. } => "static token (PPCERT_TOKEN)".into(),
            TokenSource::ClientCredentials(c, _) => {
                format!("client credentials of {} at {}", c.client_id, c.token_url)
            }
            // The program by name; its words only by digest, as they may hold a secret, so a
            // resume with other words (another tenant, another vault path) is told apart.
            TokenSource::Command(argv, _) => format!(
                "token command {} (words sha256 {})",
                argv.first().map(String::as_str).unwrap_or_default(),
                &crate::digest::sha256_hex(argv.join("\0").as_bytes())[..12]
            ),
        }
    }

    /// A source that can give a new token when the one it gave is rejected.
    pub(crate) fn renews(&self) -> bool {
        !matches!(self, TokenSource::Static { file: None, .. })
    }
}

impl From<Secret> for TokenSource {
    fn from(token: Secret) -> TokenSource {
        TokenSource::Static { token, file: None }
    }
}

/// Splits a command line into words (quotes and backslashes as a POSIX shell reads them, no
/// expansion): the program runs directly, so a shell is used only when the user names one.
pub(super) fn split_command(line: &str) -> Result<Vec<String>, AuthError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                let next = chars.next().ok_or(AuthError::TrailingBackslash)?;
                word.get_or_insert_with(String::new).push(next);
            }
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(AuthError::OpenQuote);
    }
    words.extend(word);
    if words.is_empty() {
        return Err(AuthError::EmptyCommand);
    }
    Ok(words)
}

fn client_secret(auth: &AuthSection) -> Result<Secret, ConfigError> {
    match (&auth.client_secret_env, &auth.client_secret_file) {
        (Some(_), Some(_)) => Err(AuthError::TwoClientSecrets.into()),
        (None, None) => Err(AuthError::NoClientSecret.into()),
        (Some(name), None) => crate::env::named(name).map(Secret::new).ok_or_else(|| {
            let name = name.clone();
            AuthError::ClientSecretUnset { name }.into()
        }),
        (None, Some(path)) => Ok(super::secrets::read_secret_file(
            path,
            "auth.client_secret_file",
        )?),
    }
}

/// What in `url` is a credential, if anything is: its user information, or a query parameter
/// whose name says key, secret, token, password, signature or auth.
fn credentials_in(url: &url::Url) -> Option<String> {
    if !url.username().is_empty() || url.password().is_some() {
        return Some("a user name or password before `@`".into());
    }
    const SECRET_WORDS: [&str; 8] = [
        "key",
        "secret",
        "token",
        "pass",
        "pwd",
        "sig",
        "auth",
        "credential",
    ];
    url.query_pairs().find_map(|(name, _)| {
        let lower = name.to_lowercase();
        (SECRET_WORDS.iter().any(|w| lower.contains(w)))
            .then(|| format!("the query parameter `{}`", crate::console::printable(&name)))
    })
}

fn client_credentials(auth: &AuthSection, url: &str) -> Result<ClientCredentials, ConfigError> {
    let token_url = url::Url::parse(url).map_err(|error| AuthError::TokenUrl {
        url: url.to_string(),
        error,
    })?;
    // Before anything quotes the URL: credentials in it would reach the evidence and journal.
    if let Some(key) = credentials_in(&token_url) {
        return Err(AuthError::CredentialsInTokenUrl { key }.into());
    }
    let loopback = crate::environment::is_loopback(&token_url);
    if token_url.scheme() != "https" && !(token_url.scheme() == "http" && loopback) {
        let url = url.to_string();
        return Err(AuthError::InsecureTokenUrl { url }.into());
    }
    Ok(ClientCredentials {
        token_url,
        client_id: auth.client_id.clone().ok_or(AuthError::NoClientId)?,
        client_secret: client_secret(auth)?,
        scope: auth.scope.clone(),
        audience: auth.audience.clone(),
        client_auth: auth.client_auth.unwrap_or_default(),
    })
}

/// The token source of a command: `--token-command`, else `[auth]`, else the static token.
/// Two sources at once are refused rather than one silently winning.
pub(super) fn token_source(
    args: &TargetArgs,
    file: &FileConfig,
) -> Result<Option<TokenSource>, ConfigError> {
    let auth = &file.auth;
    let timeout = Duration::from_secs(auth.timeout_secs.unwrap_or(30).clamp(1, 600));
    let configured = match (&args.token_command, &auth.command, &auth.token_url) {
        (Some(_), _, Some(_)) | (None, Some(_), Some(_)) => {
            return Err(AuthError::CommandAndTokenUrl.into());
        }
        (Some(line), _, None) | (None, Some(line), None) => {
            Some(TokenSource::Command(split_command(line)?, timeout))
        }
        (None, None, Some(url)) => Some(TokenSource::ClientCredentials(
            client_credentials(auth, url)?,
            timeout,
        )),
        (None, None, None) => None,
    };
    let fixed = super::secrets::read_token(args)?;
    match (configured, fixed) {
        (Some(_), Some(_)) => Err(AuthError::TwoSources.into()),
        (Some(source), None) => Ok(Some(source)),
        (None, Some(token)) => Ok(Some(TokenSource::Static {
            token,
            file: args.token_file.clone(),
        })),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_like_a_shell_without_running_one() {
        assert_eq!(
            split_command(r#"vault read -field=token "secret/a b" 'x y' c\ d"#).unwrap(),
            ["vault", "read", "-field=token", "secret/a b", "x y", "c d"]
        );
        assert_eq!(
            split_command(r#"sh -c 'echo "$T"'"#).unwrap(),
            ["sh", "-c", r#"echo "$T""#]
        );
        assert!(matches!(split_command("  "), Err(AuthError::EmptyCommand)));
        assert!(matches!(
            split_command("echo 'open"),
            Err(AuthError::OpenQuote)
        ));
        assert!(matches!(
            split_command("echo \\"),
            Err(AuthError::TrailingBackslash)
        ));
    }

    #[test]
    fn a_described_source_names_no_secret() {
        let credentials = TokenSource::ClientCredentials(
            ClientCredentials {
                token_url: url::Url::parse("https://staging.example/oauth/token").unwrap(),
                client_id: "partner-123".into(),
                client_secret: Secret::new("s3cr3t-value"),
                scope: None,
                audience: None,
                client_auth: ClientAuth::Basic,
            },
            Duration::from_secs(30),
        );
        let shown = credentials.describe();
        assert!(
            shown.contains("partner-123") && !shown.contains("s3cr3t"),
            "{shown}"
        );
        assert!(!TokenSource::from(Secret::new("t")).renews());
        // A file by any name is the same source; a command's words are told apart by digest.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("x")).unwrap();
        std::fs::write(dir.path().join("tok"), "t").unwrap();
        let file = |path: std::path::PathBuf| TokenSource::Static {
            token: Secret::new("t"),
            file: Some(path),
        };
        assert_eq!(
            file(dir.path().join("x/../tok")).describe(),
            file(dir.path().join("tok")).describe()
        );
        let command = |words: &[&str]| {
            let argv = words.iter().map(|w| w.to_string()).collect();
            TokenSource::Command(argv, Duration::from_secs(1)).describe()
        };
        assert_ne!(
            command(&["sh", "-c", "cat a"]),
            command(&["sh", "-c", "cat b"])
        );
        assert!(!command(&["vault", "read", "secret/x"]).contains("secret/x"));
    }

    #[test]
    fn client_credentials_are_refused_naming_what_is_missing_or_unsafe() {
        let auth = |url: &str, env: Option<&str>| AuthSection {
            token_url: Some(url.into()),
            client_id: Some("partner".into()),
            client_secret_env: env.map(String::from),
            ..AuthSection::default()
        };
        let plain = "http://idp.example/token";
        assert!(matches!(
            client_credentials(&auth(plain, Some("X")), plain),
            Err(ConfigError::Auth(AuthError::InsecureTokenUrl { url })) if url == plain
        ));
        let url = "https://idp.example/token";
        assert!(matches!(
            client_credentials(&auth(url, None), url),
            Err(ConfigError::Auth(AuthError::NoClientSecret))
        ));
        let unset = "PPCERT_TEST_NEVER_SET_CLIENT_SECRET";
        let error = client_credentials(&auth(url, Some(unset)), url).unwrap_err();
        assert!(matches!(
            &error,
            ConfigError::Auth(AuthError::ClientSecretUnset { name }) if name == unset
        ));
        assert_eq!(
            error.to_string(),
            format!("auth.client_secret_env: ${unset} is not set")
        );
        // Plain http is for this machine only, named as a target's base URL may name it.
        for local in [
            "http://127.0.0.1:8080/t",
            "http://[::1]:8080/t",
            "http://LocalHost/t",
        ] {
            assert!(
                matches!(
                    client_credentials(&auth(local, Some(unset)), local),
                    Err(ConfigError::Auth(AuthError::ClientSecretUnset { .. }))
                ),
                "{local}"
            );
        }
    }
}

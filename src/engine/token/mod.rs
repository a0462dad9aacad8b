//! The token every call carries, from its source: fetched before the first call, renewed
//! shortly before a known expiry and once after a 401 that says the token is invalid or
//! expired. Concurrent flows share one renewal. Every token issued is kept (for scrubbing
//! only: nothing issued is ever written), and the token endpoint's calls are recorded without
//! their bodies.

mod command;
mod endpoint;
mod error;
mod rules;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::TokenSource;
use crate::secret::Secret;
use crate::timestamp::Timestamp;
pub(crate) use error::TokenError;
use rules::{Fetched, RENEWAL_FLOOR, call_record};

/// A token as handed to one attempt: the generation says which renewal it came from.
#[derive(Debug, Clone)]
pub(crate) struct Lease {
    pub token: Secret,
    pub generation: u64,
}

pub(crate) use crate::record::TokenRequest as TokenCall;

struct Issued {
    token: Secret,
    generation: u64,
    expires: Option<Instant>,
    lifetime: Option<Duration>,
    /// When it was fetched: renewals before expiry keep [`RENEWAL_FLOOR`] apart.
    fetched: Instant,
}

pub(crate) struct Tokens {
    source: TokenSource,
    http: reqwest::Client,
    current: RwLock<Issued>,
    renewing: tokio::sync::Mutex<()>,
    /// Every token issued so far, and the client secret: what scrubbing removes.
    known: RwLock<Vec<Secret>>,
    calls: Mutex<Vec<TokenCall>>,
    /// A renewed token was rejected too, or no new one could be had: the run stops.
    given_up: AtomicBool,
    /// When a renewal before expiry last failed: the next is not tried at once.
    last_failure: Mutex<Option<Instant>>,
}

/// How long after a failed renewal before expiry the next is tried.
const RENEWAL_PAUSE: Duration = Duration::from_secs(5);

impl Tokens {
    /// A fixed token (the embedded sandbox's): nothing to renew, so `http` is never used.
    pub(crate) fn fixed(token: Secret, http: reqwest::Client) -> Arc<Tokens> {
        Arc::new(Tokens::with(
            TokenSource::from(token.clone()),
            token,
            None,
            http,
        ))
    }

    /// [`Tokens::fixed`] for the token a user set (`PPCERT_TOKEN`): refused as a fetched
    /// token is (exit 3, nothing sent) when no Authorization header can carry it, rather than
    /// every request going out without one.
    pub(crate) fn given(token: Secret, http: reqwest::Client) -> Result<Arc<Tokens>, TokenError> {
        let (token, _) = sendable(&TokenSource::from(token.clone()), (token, None))?;
        Ok(Tokens::fixed(token, http))
    }

    fn with(
        source: TokenSource,
        token: Secret,
        lifetime: Option<Duration>,
        http: reqwest::Client,
    ) -> Tokens {
        let mut known = vec![token.clone()];
        if let TokenSource::ClientCredentials(c, _) = &source {
            known.push(c.client_secret.clone());
            // The Basic header's base64 of `id:secret`, which an endpoint may echo whole.
            known.push(endpoint::basic_credentials(c));
        }
        Tokens {
            current: RwLock::new(Issued {
                token,
                generation: 0,
                expires: lifetime.map(|l| Instant::now() + l),
                lifetime,
                fetched: Instant::now(),
            }),
            source,
            http,
            renewing: tokio::sync::Mutex::new(()),
            known: RwLock::new(known),
            calls: Mutex::new(Vec::new()),
            given_up: AtomicBool::new(false),
            last_failure: Mutex::new(None),
        }
    }

    /// Fetches the first token from `source`; `http` carries the target's TLS roots.
    pub(crate) async fn start(
        source: TokenSource,
        http: reqwest::Client,
    ) -> Result<Arc<Tokens>, TokenError> {
        let calls = Mutex::new(Vec::new());
        let (token, lifetime) = fetch(&source, &http, &calls).await?;
        let tokens = Tokens::with(source, token, lifetime, http);
        *tokens.calls.lock().unwrap_or_else(|e| e.into_inner()) =
            calls.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok(Arc::new(tokens))
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Issued> {
        self.current.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The token to send now; one about to expire is renewed first (a failed renewal keeps
    /// the current one: the server will say whether it still works).
    pub(crate) async fn lease(&self) -> Lease {
        let (generation, expiring) = {
            let issued = self.read();
            let margin = issued.lifetime.map(renewal_margin).unwrap_or_default();
            let expiring = issued
                .expires
                .is_some_and(|at| Instant::now() + margin >= at)
                && issued.fetched.elapsed() >= RENEWAL_FLOOR;
            (issued.generation, expiring)
        };
        let resting = (self.last_failure.lock().unwrap_or_else(|e| e.into_inner()))
            .is_some_and(|at| at.elapsed() < RENEWAL_PAUSE);
        // Not on every request after a failure: the current token works until the server says.
        if expiring
            && self.source.renews()
            && !resting
            && self.renew_token(generation, false).await.is_err()
        {
            *self.last_failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        }
        self.current_lease()
    }

    fn current_lease(&self) -> Lease {
        let issued = self.read();
        Lease {
            token: issued.token.clone(),
            generation: issued.generation,
        }
    }

    /// Renews the token that `generation` leased, unless another flow already did.
    pub(crate) async fn renew(&self, generation: u64) -> Result<Lease, TokenError> {
        self.renew_token(generation, true).await
    }

    /// A new token for the one `generation` leased. After a rejection the same token back is a
    /// failure; before an expiry it is the source saying the token lives on (its new lifetime
    /// is taken).
    async fn renew_token(
        &self,
        generation: u64,
        after_rejection: bool,
    ) -> Result<Lease, TokenError> {
        let _one_at_a_time = self.renewing.lock().await;
        if self.read().generation != generation {
            return Ok(self.current_lease());
        }
        let current = self.read().token.clone();
        let (token, lifetime) = fetch(&self.source, &self.http, &self.calls).await?;
        if token.expose() == current.expose() {
            if after_rejection {
                let origin = self.source.describe();
                return Err(TokenError::SameTokenAgain { origin });
            }
            let mut issued = self.current.write().unwrap_or_else(|e| e.into_inner());
            issued.expires = lifetime.map(|l| Instant::now() + l);
            issued.lifetime = lifetime;
            issued.fetched = Instant::now();
            return Ok(Lease {
                token: issued.token.clone(),
                generation: issued.generation,
            });
        }
        self.known
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(token.clone());
        let mut issued = self.current.write().unwrap_or_else(|e| e.into_inner());
        *issued = Issued {
            token,
            generation: generation + 1,
            expires: lifetime.map(|l| Instant::now() + l),
            lifetime,
            fetched: Instant::now(),
        };
        Ok(Lease {
            token: issued.token.clone(),
            generation: issued.generation,
        })
    }

    /// Whether the source can give another token after a rejection.
    pub(crate) fn renews(&self) -> bool {
        self.source.renews()
    }

    /// Whether the current token is past the expiry its source announced.
    pub(crate) fn expired(&self) -> bool {
        self.read().expires.is_some_and(|at| Instant::now() >= at)
    }

    pub(crate) fn give_up(&self) {
        self.given_up.store(true, Ordering::Relaxed);
    }

    /// A renewed token was rejected too, or none could be had: no more flows should start.
    pub(crate) fn given_up(&self) -> bool {
        self.given_up.load(Ordering::Relaxed)
    }

    pub(crate) fn describe(&self) -> String {
        self.source.describe()
    }

    /// The fingerprint of the token in use now.
    pub(crate) fn fingerprint(&self) -> String {
        self.read().token.fingerprint()
    }

    /// The token endpoint's (or command's) calls so far.
    pub(crate) fn calls(&self) -> Vec<TokenCall> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Scrubs these secrets too (values a template read from the environment).
    pub(crate) fn also_scrub(&self, secrets: &[Secret]) {
        let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
        known.extend(secrets.iter().filter(|s| s.scrubbable()).cloned());
    }

    /// `text` with every token issued so far and the client secret removed.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let known = self.known.read().unwrap_or_else(|e| e.into_inner());
        // Copied only when a secret was found: most texts hold none.
        let mut text = std::borrow::Cow::Borrowed(text);
        for secret in known.iter() {
            if let std::borrow::Cow::Owned(scrubbed) = secret.scrub_cow(&text) {
                text = std::borrow::Cow::Owned(scrubbed);
            }
        }
        text.into_owned()
    }

    pub(crate) fn scrub_json(&self, value: &mut Value) {
        for secret in self.known.read().unwrap_or_else(|e| e.into_inner()).iter() {
            secret.scrub_json(value);
        }
    }
}

impl crate::secret::Scrub for Tokens {
    fn scrub(&self, text: &str) -> String {
        Tokens::scrub(self, text)
    }

    fn scrub_json(&self, value: &mut Value) {
        Tokens::scrub_json(self, value)
    }
}

/// How long before a known expiry a token is renewed: a fifth of its life, 1 to 60 s, and
/// never more than half of it.
fn renewal_margin(lifetime: Duration) -> Duration {
    (lifetime / 5)
        .clamp(Duration::from_secs(1), Duration::from_secs(60))
        .min(lifetime / 2)
}

fn record(calls: &Mutex<Vec<TokenCall>>, call: TokenCall) {
    let mut calls = calls.lock().unwrap_or_else(|e| e.into_inner());
    // A run renewing a short-lived token for hours must not grow without bound.
    if calls.len() >= 1000 {
        calls.remove(0);
    }
    calls.push(call);
}

async fn fetch(
    source: &TokenSource,
    http: &reqwest::Client,
    calls: &Mutex<Vec<TokenCall>>,
) -> Result<Fetched, TokenError> {
    let (at, clock) = (Timestamp::now(), Instant::now());
    let (request, result) = match source {
        TokenSource::Static {
            file: Some(path), ..
        } => (
            format!("read {}", path.display()),
            crate::config::read_secret_file(path, "--token-file")
                .map(|t| (t, None))
                .map_err(TokenError::from),
        ),
        TokenSource::Static { token, file: None } => {
            ("PPCERT_TOKEN".into(), Ok((token.clone(), None)))
        }
        TokenSource::ClientCredentials(credentials, timeout) => {
            return endpoint::fetch(credentials, http, *timeout, |call| record(calls, call))
                .await
                .and_then(|fetched| sendable(source, fetched));
        }
        TokenSource::Command(argv, timeout) => (
            format!("command {}", argv[0]),
            command::run(argv, *timeout).await,
        ),
    };
    record(calls, call_record(at, clock, request, &result));
    result.and_then(|fetched| sendable(source, fetched))
}

/// A token a header can carry, or the error naming why not: never a request sent without
/// the Authorization its record claims.
fn sendable(source: &TokenSource, fetched: Fetched) -> Result<Fetched, TokenError> {
    match rules::unsendable(fetched.0.expose()) {
        None => Ok(fetched),
        Some(why) => Err(TokenError::Unsendable {
            origin: source.describe(),
            why,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_answers_of_every_documented_form_are_read() {
        use command::token_answer;
        let (token, life) = token_answer(&json!({"access_token": "a1", "expires_in": 20})).unwrap();
        assert_eq!(
            (token.expose(), life),
            ("a1", Some(Duration::from_secs(20)))
        );
        let later = (chrono::Utc::now() + chrono::Duration::seconds(90)).to_rfc3339();
        let (_, life) = token_answer(&json!({"token": "a2", "Expiration": later})).unwrap();
        assert!(life.unwrap() > Duration::from_secs(80));
        assert!(token_answer(&json!({"access_token": ""})).is_none());
        assert!(token_answer(&json!({"expires_in": 5})).is_none());
    }

    #[test]
    fn renewal_comes_a_fifth_of_a_life_early_within_bounds() {
        assert_eq!(
            renewal_margin(Duration::from_secs(4)),
            Duration::from_secs(1)
        );
        assert_eq!(
            renewal_margin(Duration::from_secs(100)),
            Duration::from_secs(20)
        );
        assert_eq!(
            renewal_margin(Duration::from_secs(7200)),
            Duration::from_secs(60)
        );
        assert_eq!(
            renewal_margin(Duration::from_secs(1)),
            Duration::from_millis(500)
        );
    }
}

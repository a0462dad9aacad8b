//! The tokens `/oauth/token` issued, with when each expires, and the verdict on one presented.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Tokens remembered at most; past it the oldest issued is forgotten (and then answers 401
/// like a token never issued), so a client fetching tokens in a loop cannot grow this.
pub const REMEMBERED: usize = 100_000;

#[derive(Default)]
pub struct Issued {
    tokens: Mutex<(HashMap<String, Instant>, VecDeque<String>)>,
}

/// Whether a bearer token the sandbox issued is still valid.
pub enum Verdict {
    Valid,
    Expired,
    Unknown,
}

impl Issued {
    pub fn judge(&self, token: &str) -> Verdict {
        let tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        match tokens.0.get(token) {
            Some(expires) if Instant::now() < *expires => Verdict::Valid,
            Some(_) => Verdict::Expired,
            None => Verdict::Unknown,
        }
    }

    /// Tokens remembered.
    pub(crate) fn len(&self) -> usize {
        self.tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .len()
    }

    pub(super) fn issue(&self, ttl: Duration) -> String {
        let token = format!("tok_{:032x}", rand::random::<u128>());
        let mut guard = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, order) = &mut *guard;
        // Before, only expired tokens were dropped: a loop of fetches within one lifetime
        // grew the table without end.
        while order.len() >= REMEMBERED {
            if let Some(oldest) = order.pop_front() {
                tokens.remove(&oldest);
            }
        }
        tokens.insert(token.clone(), Instant::now() + ttl);
        order.push_back(token.clone());
        token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Before, a table of tokens all still valid grew past the bound without end.
    #[test]
    fn tokens_still_valid_are_forgotten_oldest_first_past_the_bound() {
        let issued = Issued::default();
        let first = issued.issue(Duration::from_secs(3600));
        for _ in 0..REMEMBERED {
            issued.issue(Duration::from_secs(3600));
        }
        let held = issued.tokens.lock().unwrap().0.len();
        assert_eq!(held, REMEMBERED);
        assert!(matches!(issued.judge(&first), Verdict::Unknown));
    }
}

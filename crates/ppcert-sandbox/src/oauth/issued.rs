//! The tokens `/oauth/token` issued, with when each expires, and the verdict on one presented.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Tokens remembered at most; expired ones are dropped first.
const REMEMBERED: usize = 100_000;

#[derive(Default)]
pub struct Issued {
    tokens: Mutex<HashMap<String, Instant>>,
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
        match tokens.get(token) {
            Some(expires) if Instant::now() < *expires => Verdict::Valid,
            Some(_) => Verdict::Expired,
            None => Verdict::Unknown,
        }
    }

    pub(super) fn issue(&self, ttl: Duration) -> String {
        let token = format!("tok_{:032x}", rand::random::<u128>());
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        if tokens.len() >= REMEMBERED {
            let now = Instant::now();
            tokens.retain(|_, expires| *expires > now);
        }
        tokens.insert(token.clone(), Instant::now() + ttl);
        token
    }
}

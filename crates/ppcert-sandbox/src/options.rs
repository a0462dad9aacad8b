//! Everything `ppcert serve` and tests can set on a sandbox, with its defaults: plain values,
//! so every file that reads them imports this one and none imports the crate root.

use std::net::SocketAddr;
use std::time::Duration;

use rand::RngExt;

use crate::dialect::ApiDialect;
use crate::layout::Layout;
use crate::listener;
use crate::quirks::seen::Quirks;
use crate::store::{DEFAULT_MAX_BOOKINGS, DEFAULT_MAX_OPEN_QUOTES};
use crate::webhooks::WebhookOptions;

/// The client id the sandbox's token endpoint knows unless told another.
pub const DEFAULT_CLIENT_ID: &str = "ppcert-sandbox";

/// Which header an injected 429 announces its wait in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateLimitHeader {
    #[default]
    RetryAfter,
    /// `RateLimit-Reset: SECS` (IETF draft), no `Retry-After`.
    RateLimitReset,
    /// `X-RateLimit-Reset: UNIX-TIME`, no `Retry-After`.
    XRateLimitReset,
}

/// Everything `ppcert serve` and tests can set.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    pub addr: SocketAddr,
    pub token: String,
    pub latency: Duration,
    pub jitter: Duration,
    /// Answer 429 to every Nth request, announcing the wait in `rate_limit_header`.
    pub rate_limit_every: Option<u64>,
    pub rate_limit_header: RateLimitHeader,
    /// Subscriptions and claims require `Idempotency-Key`; a repeated key replays its answer.
    pub require_idempotency_key: bool,
    /// Issue tokens that live this long at `POST /oauth/token` (client credentials, the
    /// sandbox's token as the client secret); the API then takes only those.
    pub token_ttl: Option<Duration>,
    /// The client id `/oauth/token` knows.
    pub client_id: String,
    pub retry_after_secs: u64,
    /// Answer 503 to every Nth request.
    pub unavailable_every: Option<u64>,
    /// Process every Nth POST, then cut the connection instead of answering.
    pub drop_every: Option<u64>,
    /// Process every Nth POST (counted with `drop_every`'s), then answer 500 instead of its
    /// success: the write took effect although the answer says it failed.
    pub error_after_write_every: Option<u64>,
    /// Production mode: `claimDate` is refused.
    pub production: bool,
    pub layout: Layout,
    /// How long a claim with bank details stays in each status before moving on.
    pub claim_step: Duration,
    /// Serve the API under this prefix (`/partner-api`), as a real server behind a gateway would.
    pub path_prefix: Option<String>,
    /// Which document's request shapes are enforced.
    pub dialect: ApiDialect,
    /// Unused quotes held at most; beyond it the oldest expire (bounded memory).
    pub max_open_quotes: usize,
    /// Bookings held at most; beyond it the oldest are forgotten (bounded memory).
    pub max_bookings: usize,
    /// Deliver webhooks for contract and claim changes.
    pub webhooks: Option<WebhookOptions>,
    /// Claims decided after their answer: it carries no status; the contracts read shows the
    /// status once this long has passed (`Some(ZERO)`: at once).
    pub claims_decided_after: Option<Duration>,
    /// Subscriptions whose booking number does not match this regex whole are refused (400).
    pub booking_number_pattern: Option<String>,
    /// Body size, timeouts, connections and the stop's grace period.
    pub limits: listener::Limits,
    /// Answer quotes one entry per bundle, in the provider's documented shape
    /// (`{"data": [ {id, reference, bundle, price, documents}, ... ]}`); empty: one quote.
    pub quote_bundles: Vec<String>,
    /// A new booking's contracts are listed only this long after its subscription was
    /// answered (read-after-write lag); meanwhile the subscription's answer and the contracts
    /// read carry none.
    pub contracts_delay: Option<Duration>,
    /// `PATCH /subscriptions/{bn}` needs `If-Match` with the `ETag` of the booking's latest
    /// contracts read: 428 without it, 412 when stale. Contracts reads then carry `ETag`.
    pub require_if_match: bool,
    /// Compression, required headers, HTTPS and client certificates.
    pub transport: Transport,
    /// Trailing-slash routes, UTC-only date-times, a `PUT` flight-status call.
    pub quirks: Quirks,
    /// `POST /subscriptions` answers `202 Accepted` with the `Location` of an operation
    /// resource, `running` for a while, then `succeeded` (carrying the subscription) or
    /// `failed`; a subscription counts only once its operation is read as succeeded.
    pub subscription_operations: Option<SubscriptionOperations>,
    /// Request encodings required: a media type, JSON Patch updates, multipart claims.
    pub wire: Wire,
}

/// Request encodings the sandbox requires; each on its own or together (`ppcert serve
/// --media-type`, `--json-patch-updates`, `--multipart-claims`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wire {
    /// Every JSON request body must be sent as this media type (415 otherwise), `Accept`
    /// must admit it (406 otherwise), and JSON answers carry it. `application/vnd.api+json`
    /// also wants JSON:API documents, `{"data": {"type": ..., "attributes": {...}}}`, and
    /// answers with them (`jsonapi.rs`).
    pub media_type: Option<String>,
    /// `PATCH /subscriptions/{bookingNumber}` takes a JSON Patch (RFC 6902,
    /// `application/json-patch+json`) over the subscription `{bookingNumber, quotes, client}`.
    pub json_patch_updates: bool,
    /// `POST /contracts/{id}/claims` takes `multipart/form-data`: a `claim` part (the claim,
    /// in the media type above if any) and a `document` part that is a PDF.
    pub multipart_claims: bool,
}

impl Wire {
    /// Whether any encoding is required.
    pub fn is_on(&self) -> bool {
        self.media_type.is_some() || self.json_patch_updates || self.multipart_claims
    }
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: random_token(),
            latency: Duration::ZERO,
            jitter: Duration::ZERO,
            rate_limit_every: None,
            rate_limit_header: RateLimitHeader::RetryAfter,
            require_idempotency_key: false,
            token_ttl: None,
            client_id: DEFAULT_CLIENT_ID.to_string(),
            retry_after_secs: 1,
            unavailable_every: None,
            drop_every: None,
            error_after_write_every: None,
            production: false,
            layout: Layout::default(),
            claim_step: Duration::from_secs(2),
            path_prefix: None,
            dialect: ApiDialect::Spec,
            max_open_quotes: DEFAULT_MAX_OPEN_QUOTES,
            max_bookings: DEFAULT_MAX_BOOKINGS,
            webhooks: None,
            claims_decided_after: None,
            booking_number_pattern: None,
            limits: listener::Limits::default(),
            quote_bundles: Vec::new(),
            contracts_delay: None,
            require_if_match: false,
            transport: Transport::default(),
            quirks: Quirks::default(),
            subscription_operations: None,
            wire: Wire::default(),
        }
    }
}

impl SandboxOptions {
    /// The path prefix the API is served under: `""` or `/segment…` with no trailing slash.
    pub fn api_prefix(&self) -> &str {
        self.path_prefix
            .as_deref()
            .map(|p| p.trim_end_matches('/'))
            .filter(|p| p.starts_with('/'))
            .unwrap_or("")
    }
}

/// A fresh random bearer token for a sandbox.
pub fn random_token() -> String {
    let mut rng = rand::rng();
    let bytes: [u8; 24] = rng.random();
    format!(
        "sbx_{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// Everything about the sandbox's transport; the default is plain HTTP, no extra header.
#[derive(Debug, Clone, Default)]
pub struct Transport {
    /// Answer with `Content-Encoding: gzip` when the request's `Accept-Encoding` allows it.
    pub gzip: bool,
    /// Headers every API call must carry with exactly this value (`X-Api-Version: 2`).
    pub required_headers: Vec<(String, String)>,
    /// Serve HTTPS with this identity (and, optionally, require client certificates).
    pub tls: Option<TlsIdentity>,
}

/// The sandbox's certificate and key, and the CA client certificates must chain to (PEM).
#[derive(Clone, Default)]
pub struct TlsIdentity {
    pub cert_chain_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
    /// Require a client certificate signed by this CA; refuse the handshake without one.
    pub client_ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("client_certificates", &self.client_ca_pem.is_some())
            .finish_non_exhaustive()
    }
}

/// How an asynchronous subscription behaves (see the module's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubscriptionOperations {
    /// How long an operation reads `running` before it is decided.
    pub running_for: Duration,
    /// Every Nth operation fails (`None`: none does unless the store refuses it).
    pub fail_every: Option<u64>,
}

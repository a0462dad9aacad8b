//! The embedded staging simulator: a strict, in-memory Partner Protection API on loopback.
//!
//! Started by [`Sandbox::start`] (for `ppcert run` and tests) or by `ppcert serve`. A crate of its
//! own so that the compiler holds it apart from the client it tests: it shares only the API
//! models with ppcert.

// A function over 60 lines (the workspace's clippy.toml) is split into named parts.
#![warn(clippy::too_many_lines)]

/// The API models, as the rest of the sandbox names them.
pub use ppcert_models as models;

mod dialect;
mod faults;
mod handlers;
mod idempotency;
mod linger;
pub mod listener;
mod living;
mod oauth;
mod shape;
mod store;
#[cfg(feature = "testing")]
pub mod testing;
mod transport;
pub mod validate;
mod webhooks;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::routing::{get, patch, post};
use chrono::{DateTime, Utc};
use rand::RngExt;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::models::Operation;
pub use dialect::ApiDialect;
pub use shape::{ErrorShape, QuoteWrapper};
pub use store::{
    DEFAULT_MAX_BOOKINGS, DEFAULT_MAX_OPEN_QUOTES, FRAUD_WINDOW_HOURS, PRODUCT_RATE,
    QUOTE_VALIDITY_HOURS,
};
pub use transport::{TlsIdentity, Transport, parse_header};
pub use webhooks::{DELIVERY_TIMEOUT, DeliveryAttempt, RETRY_DELAYS, WebhookOptions};

/// Response layouts for the points the spec leaves open, so clients can be tested against each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Wrap response bodies in `{"data": ...}`.
    pub wrap: bool,
    pub contracts: ContractsLayout,
    /// Success status of PATCH /subscriptions/{bookingNumber}: 200 or 201.
    pub update_status: u16,
    pub price_delta: DeltaShape,
    /// Success status of DELETE /quotes/{id}: 200, 202 or 204.
    pub delete_status: u16,
    pub quote_wrapper: QuoteWrapper,
    /// Each contract element as `{"contract": {...}, "claim": {...}}`.
    pub nested_contract_objects: bool,
    /// Ids as JSON numbers.
    pub integer_ids: bool,
    /// `201` answers (but the quote's) with an empty body.
    pub empty_created: bool,
    pub errors: ErrorShape,
    /// `claimDate` must be a date (`YYYY-MM-DD`); a date-time is refused.
    pub claim_date_day_only: bool,
    /// Success status of POST /contracts/{id}/claims: 201, or 202 (accepted for processing).
    pub claim_status: u16,
    /// A new subscription's answer is an empty `201` whose `Location` names the contract.
    pub location_ids: bool,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            wrap: true,
            contracts: ContractsLayout::ByType,
            update_status: 201,
            claim_status: 201,
            location_ids: false,
            price_delta: DeltaShape::Number,
            delete_status: 204,
            quote_wrapper: QuoteWrapper::None,
            nested_contract_objects: false,
            integer_ids: false,
            empty_created: false,
            errors: ErrorShape::Spec,
            claim_date_day_only: false,
        }
    }
}

/// How GET /subscriptions/{bookingNumber}/contracts groups contracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContractsLayout {
    /// `{"WITHDRAWAL": [...], ...}`
    ByType,
    /// `{"contracts": {"WITHDRAWAL": [...]}}`
    Nested,
    /// `[{"productType": "WITHDRAWAL", ...}]`
    List,
}

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

/// How `priceDelta` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeltaShape {
    /// `12.5`
    Number,
    /// `"12.50"`
    String,
    /// `{"amount": 12.5, "currency": "EUR"}`
    Object,
    /// `{"currencyCode": "EUR", "units": "12", "nanos": 500000000}` (`google.type.Money`);
    /// prices are written so too.
    UnitsNanos,
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

/// State shared by the sandbox's handlers.
pub(crate) struct Shared {
    store: Mutex<store::Store>,
    options: SandboxOptions,
    clock_offset: Mutex<chrono::Duration>,
    requests: AtomicU64,
    posts: AtomicU64,
    webhooks: Option<Arc<webhooks::Sender>>,
    keys: idempotency::Keys,
    issued: oauth::Issued,
}

impl Shared {
    fn store(&self) -> MutexGuard<'_, store::Store> {
        // A panicking handler cannot leave the store half-written (every mutation happens after
        // all checks), so a poisoned lock is still safe to use.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies a change to the store, then hands the webhook events it caused to the sender,
    /// outside the lock and without waiting for their delivery.
    fn change<T>(&self, apply: impl FnOnce(&mut store::Store) -> T) -> T {
        let (result, events) = {
            let mut store = self.store();
            let result = apply(&mut store);
            (result, store.take_events())
        };
        if let Some(sender) = &self.webhooks
            && !events.is_empty()
        {
            sender.dispatch(events);
        }
        result
    }

    fn now(&self) -> DateTime<Utc> {
        Utc::now() + *self.clock_offset.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn rules(&self) -> store::Rules {
        store::Rules {
            production: self.options.production,
            claim_step: chrono::Duration::from_std(self.options.claim_step)
                .unwrap_or(chrono::Duration::MAX),
            claims_decided_after: (self.options.claims_decided_after)
                .map(|after| chrono::Duration::from_std(after).unwrap_or(chrono::Duration::MAX)),
        }
    }
}

/// A running sandbox on loopback; dropped or [`Sandbox::shutdown`], it stops serving.
pub struct Sandbox {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl Sandbox {
    /// Binds `options.addr` (port 0 for an ephemeral port) and serves in the background.
    pub async fn start(options: SandboxOptions) -> std::io::Result<Sandbox> {
        let listener = tokio::net::TcpListener::bind(options.addr).await?;
        let addr = listener.local_addr()?;
        let webhooks = match &options.webhooks {
            Some(webhook) => Some(Arc::new(webhooks::Sender::new(webhook.clone())?)),
            None => None,
        };
        let shared = Arc::new(Shared {
            store: Mutex::new(
                store::Store::new(rand::rng().random())
                    .with_numeric_ids(options.layout.integer_ids)
                    .with_max_open_quotes(options.max_open_quotes)
                    .with_max_bookings(options.max_bookings)
                    .with_events(webhooks.is_some()),
            ),
            webhooks,
            options,
            clock_offset: Mutex::new(chrono::Duration::zero()),
            requests: AtomicU64::new(0),
            posts: AtomicU64::new(0),
            keys: idempotency::Keys::default(),
            issued: oauth::Issued::default(),
        });
        let app = router(shared.clone());
        let limits = shared.options.limits;
        let tls = match &shared.options.transport.tls {
            Some(identity) => Some(Arc::new(transport::server_config(identity)?)),
            None => None,
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(listener::serve_tls(listener, app, limits, tls, async {
            let _ = stopped.await;
        }));
        Ok(Sandbox {
            addr,
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT` plus the path prefix, with no trailing slash.
    pub fn base_url(&self) -> String {
        format!("{}{}", self.root_url(), self.shared.options.api_prefix())
    }

    /// Every API request that reached the sandbox, refused ones included.
    pub fn requests_received(&self) -> u64 {
        self.shared
            .requests
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The server's root, without the API's path prefix (the token endpoint is there).
    pub fn root_url(&self) -> String {
        let scheme = match self.shared.options.transport.tls {
            Some(_) => "https",
            None => "http",
        };
        format!("{scheme}://{}", self.addr)
    }

    /// Where the OpenAPI document is: always at the root, whatever the path prefix.
    pub fn openapi_url(&self) -> String {
        format!("{}/openapi.json", self.root_url())
    }

    pub fn token(&self) -> &str {
        &self.shared.options.token
    }

    /// The sandbox's own count of successful operations per kind (responses lost included).
    pub fn counts(&self) -> BTreeMap<Operation, u64> {
        self.shared.store().counts()
    }

    /// Subscribed quotes per bundle (with `quote_bundles`): which bundle's reference a
    /// partner subscribed with.
    pub fn subscribed_bundles(&self) -> BTreeMap<String, u64> {
        self.shared.store().subscribed_bundles()
    }

    /// Every webhook delivery attempt so far (the newest 10,000), in the order they ended.
    pub fn webhook_deliveries(&self) -> Vec<DeliveryAttempt> {
        self.shared
            .webhooks
            .as_ref()
            .map(|sender| sender.attempts())
            .unwrap_or_default()
    }

    /// Waits, at most `limit`, until no delivery that is already due is still under way: a
    /// run against the sandbox lets the events its own last requests caused arrive, without
    /// waiting for statuses still to come.
    pub async fn settle_webhooks(&self, limit: Duration) {
        let Some(sender) = &self.shared.webhooks else {
            return;
        };
        let deadline = tokio::time::Instant::now() + limit;
        // A task spawned a moment ago may not have counted itself yet.
        tokio::time::sleep(Duration::from_millis(20)).await;
        while sender.due() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Moves the sandbox's clock forward, to test time rules (contract validity, claim status).
    pub fn advance_clock(&self, by: chrono::Duration) {
        *self
            .shared
            .clock_offset
            .lock()
            .unwrap_or_else(|e| e.into_inner()) += by;
    }

    /// Stops accepting, lets in-flight requests finish (for at most the grace period of its
    /// limits), and waits for the server to end.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => task.await.unwrap_or_else(|e| Err(std::io::Error::other(e))),
            None => Ok(()),
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn router(shared: Arc<Shared>) -> Router {
    let api = Router::new()
        .route("/quotes", post(handlers::create_quote))
        .route(
            "/quotes/{id}",
            axum::routing::delete(handlers::delete_quote),
        )
        .route("/subscriptions", post(handlers::subscribe))
        .route("/subscriptions/{booking_number}", patch(handlers::update))
        .route(
            "/subscriptions/{booking_number}/contracts",
            get(handlers::contracts),
        )
        .route("/contracts/{contract_id}/claims", post(handlers::claim));
    let api = match shared.options.dialect {
        ApiDialect::Spec => api.route(
            "/flight-cancellations",
            post(handlers::report_flight_cancellation),
        ),
        ApiDialect::ProviderDocs => api.route(
            "/flights/{airline}/{number}/{local_date}/{origin}/statuses",
            post(handlers::report_flight_status),
        ),
    };
    let api = api
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            idempotency::enforce,
        ))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            faults::authorize,
        ))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            faults::inject,
        ))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            shape::reshape,
        ))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            transport::require_headers,
        ));
    let api = match shared.options.api_prefix() {
        "" => api,
        prefix => Router::new().nest(prefix, api),
    };
    Router::new()
        .route("/openapi.json", get(handlers::openapi))
        .route("/oauth/token", post(oauth::token))
        .merge(api)
        .fallback(handlers::not_found)
        .method_not_allowed_fallback(handlers::method_not_allowed)
        .layer(axum::middleware::map_response(name_the_sandbox))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            transport::compress,
        ))
        .with_state(shared)
}

/// Every answer says it comes from ppcert's sandbox, so a run can never take it for staging,
/// whatever URL it reached it by.
pub const SANDBOX_HEADER: &str = "x-ppcert-sandbox";

async fn name_the_sandbox(mut response: axum::response::Response) -> axum::response::Response {
    response.headers_mut().insert(
        SANDBOX_HEADER,
        axum::http::HeaderValue::from_static(env!("CARGO_PKG_VERSION")),
    );
    response
}

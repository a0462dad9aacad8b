//! A running sandbox: [`Sandbox::start`] binds, builds the router (routes, then the middleware
//! in the order a request meets it) and serves in the background until dropped or shut down.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::routing::{get, patch, post, put};
use rand::RngExt;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::dialect::ApiDialect;
use crate::idempotency::keys::Keys;
use crate::models::Operation;
use crate::oauth::issued::Issued;
use crate::options::SandboxOptions;
use crate::quirks::seen::{Counters, QuirksSeen};
use crate::shared::Shared;
use crate::webhooks::DeliveryAttempt;
use crate::{
    faults, handlers, idempotency, listener, oauth, quirks, shape, store, transport, webhooks, wire,
};

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
            keys: Keys::default(),
            issued: Issued::default(),
            quirks_seen: Counters::default(),
            operations: Default::default(),
        });
        let app = quirks::around(router(shared.clone()), shared.clone());
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

    /// How many entries each of the sandbox's stores holds (each is capped).
    pub fn held(&self) -> crate::Held {
        let mut held = self.shared.store().held();
        held.idempotency_keys = self.shared.keys.len();
        held.operations = self.shared.operations.lock().1.len();
        held.tokens = self.shared.issued.len();
        held
    }

    /// What the sandbox saw of its [`Quirks`](crate::Quirks) (and of clients accepting gzip)
    /// so far.
    pub fn quirks_seen(&self) -> QuirksSeen {
        self.shared.quirks_seen.seen()
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
        .route("/contracts/{contract_id}/claims", post(handlers::claim))
        .route("/operations/{id}", get(crate::operations::read));
    let api = with_flight_call(api, &shared);
    let api = api
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            quirks::utc_only,
        ))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            idempotency::enforce,
        ))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            wire::decode,
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

/// The flight-cancellation call: the quirk's `PUT` when asked, else the dialect's own.
fn with_flight_call(api: Router<Arc<Shared>>, shared: &Shared) -> Router<Arc<Shared>> {
    match shared.options.dialect {
        _ if shared.options.quirks.flight_status_put => api.route(
            quirks::FLIGHT_STATUS_PATH,
            put(quirks::report_flight_status),
        ),
        ApiDialect::Spec => api.route(
            "/flight-cancellations",
            post(handlers::report_flight_cancellation),
        ),
        ApiDialect::ProviderDocs => api.route(
            "/flights/{airline}/{number}/{local_date}/{origin}/statuses",
            post(handlers::report_flight_status),
        ),
    }
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

//! The one HTTP server loop of every ppcert listener (`serve` and the embedded sandbox,
//! `proxy`, `webhook listen`, a run's webhook receiver): header and body read timeouts, a body
//! size limit answered 413 before the body is read past it, a connection limit, and a graceful
//! stop that gives in-flight requests a short deadline, then drops them.
//!
//! It lives in the sandbox's crate because the sandbox needs it too and must not import ppcert;
//! ppcert reaches it as `crate::sandbox::listener`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// What a listener tolerates from its clients. Every field has a documented default and a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body; a larger one is answered 413 (before it is read, when its
    /// `Content-Length` says so; as soon as it goes past, when it is chunked).
    pub max_body: usize,
    /// Time a client has to send a whole request header; then the connection is closed.
    pub header_timeout: Duration,
    /// Time a client has to send a whole request body; then it is answered 408.
    pub body_timeout: Duration,
    /// Connections served at once; more wait in the kernel's queue until one ends.
    pub max_connections: usize,
    /// After the stop: how long in-flight requests may still finish before they are dropped.
    pub grace: Duration,
}

/// Default body limit of the API listeners: the API's bodies are a few kilobytes.
pub const DEFAULT_MAX_BODY: usize = 1 << 20;
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_MAX_CONNECTIONS: usize = 128;
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body: DEFAULT_MAX_BODY,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            grace: DEFAULT_GRACE,
        }
    }
}

/// Serves `router` on `listener` within `limits` until `stop` resolves; then stops accepting,
/// lets in-flight requests finish for at most `limits.grace`, drops what is left and returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stop: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    serve_tls(listener, router, limits, None, stop).await
}

/// As [`serve`]; with `tls`, each connection is a TLS one (a handshake that fails, or takes
/// longer than the header timeout, closes it).
pub async fn serve_tls(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    tls: Option<Arc<rustls::ServerConfig>>,
    stop: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    let router = router.layer(axum::middleware::from_fn_with_state(limits, bounded_body));
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (closing, closed) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(stop);
    loop {
        // The permit is taken before accepting: beyond the limit, clients wait in the backlog.
        let permit = tokio::select! {
            _ = &mut stop => break,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let tcp = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                // Out of file descriptors and the like: wait instead of spinning.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        // Small answers must not wait for Nagle's algorithm.
        let _ = tcp.set_nodelay(true);
        let router = router.clone();
        let closed = closed.clone();
        let acceptor = acceptor.clone();
        connections.spawn(async move {
            match acceptor {
                None => connection(tcp, router, limits.header_timeout, closed).await,
                Some(acceptor) => {
                    let handshake = acceptor.accept(tcp);
                    if let Ok(Ok(tls)) =
                        tokio::time::timeout(limits.header_timeout, handshake).await
                    {
                        connection(tls, router, limits.header_timeout, closed).await;
                    }
                }
            }
            drop(permit);
        });
    }
    drop(listener);
    let _ = closing.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.grace, drained).await.is_err() {
        connections.shutdown().await;
    }
    Ok(())
}

/// One HTTP/1.1 connection, closed gracefully (after its current request) once `closed` says so.
async fn connection<Io>(
    tcp: Io,
    router: Router,
    header_timeout: Duration,
    mut closed: watch::Receiver<bool>,
) where
    Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let conn = builder.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(router));
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = closed.wait_for(|closed| *closed) => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}

/// Reads the whole body within the limits before any handler sees it: 413 for a body over
/// the limit (unread when its declared length says so), 408 for one that comes too slowly.
async fn bounded_body(State(limits): State<Limits>, request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body as u64) {
        return too_large(limits.max_body);
    }
    let (parts, body) = request.into_parts();
    let read = Limited::new(body, limits.max_body).collect();
    let bytes = match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return too_large(limits.max_body);
        }
        Ok(Err(_)) => return refusal(StatusCode::BAD_REQUEST, "the request body was cut off"),
        Err(_) => {
            let why = format!(
                "the request body did not arrive within {} s",
                limits.body_timeout.as_secs()
            );
            return refusal(StatusCode::REQUEST_TIMEOUT, &why);
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn too_large(max_body: usize) -> Response {
    let why = format!("the request body is larger than {max_body} bytes");
    refusal(StatusCode::PAYLOAD_TOO_LARGE, &why)
}

/// A plain-text refusal that closes the connection: the rest of the body is never read.
fn refusal(status: StatusCode, why: &str) -> Response {
    let mut response = (status, format!("{why}\n")).into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

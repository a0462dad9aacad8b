//! The one HTTP server loop of every ppcert listener (`serve` and the embedded sandbox,
//! `proxy`, `webhook listen`, a run's webhook receiver): header and body read timeouts, a body
//! size limit answered 413 before the body is read past it, a connection limit that idle
//! connections cannot exhaust, a lingering close (so a refused sender reads its 413), error
//! answers in JSON, and a graceful stop that gives in-flight requests a short deadline, then
//! drops them.
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

use crate::linger;

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
    /// Connections served at once. A connection takes its slot when its first byte arrives
    /// (until then it waits, at most `header_timeout`, without one); more wait until one ends.
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
    let router = router
        .layer(axum::middleware::from_fn_with_state(limits, bounded_body))
        .layer(axum::middleware::from_fn(json_errors));
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let accepted = waiting_room(limits);
    let (closing, closed) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(stop);
    loop {
        let waiting = tokio::select! {
            _ = &mut stop => break,
            permit = accepted.clone().acquire_owned() => match permit {
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
        let slot = Slot {
            router: router.clone(),
            limits,
            permits: permits.clone(),
            acceptor: acceptor.clone(),
            closed: closed.clone(),
        };
        connections.spawn(serve_accepted(tcp, waiting, slot));
    }
    drop(listener);
    let _ = closing.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.grace, drained).await.is_err() {
        connections.shutdown().await;
    }
    Ok(())
}

/// Accepted connections not yet served: bounded too, so a flood of silent ones waits in the
/// kernel's backlog instead of taking every file descriptor.
fn waiting_room(limits: Limits) -> Arc<Semaphore> {
    Arc::new(Semaphore::new(
        (limits.max_connections.max(1))
            .saturating_mul(WAITING_PER_SLOT)
            .max(MIN_WAITING),
    ))
}

/// What an accepted connection's task shares with its listener.
struct Slot {
    router: Router,
    limits: Limits,
    /// The connection limit: a slot each connection takes at its first byte.
    permits: Arc<Semaphore>,
    acceptor: Option<tokio_rustls::TlsAcceptor>,
    closed: watch::Receiver<bool>,
}

/// One accepted connection, holding its place among the `waiting` until it starts a request.
async fn serve_accepted(
    tcp: tokio::net::TcpStream,
    waiting: tokio::sync::OwnedSemaphorePermit,
    slot: Slot,
) {
    let Slot {
        router,
        limits,
        permits,
        acceptor,
        mut closed,
    } = slot;
    // A slot is taken once a request starts: a silent connection never holds one.
    let started = tokio::select! {
        started = linger::first_byte(&tcp, limits.header_timeout) => started,
        _ = closed.wait_for(|closed| *closed) => false,
    };
    if !started {
        return;
    }
    let permit = tokio::select! {
        permit = permits.acquire_owned() => permit,
        _ = closed.wait_for(|closed| *closed) => return,
    };
    drop(waiting);
    match acceptor {
        None => connection(tcp, router, limits.header_timeout, closed).await,
        Some(acceptor) => {
            let handshake = acceptor.accept(tcp);
            if let Ok(Ok(tls)) = tokio::time::timeout(limits.header_timeout, handshake).await {
                tls_connection(tls, router, limits.header_timeout, closed).await;
            }
        }
    }
    drop(permit);
}

/// One HTTP/1.1 connection, closed gracefully (after its current request) once `closed` says so;
/// then what the client still sends is read and dropped for a while (a lingering close), so a
/// client refused mid-upload reads its answer instead of a reset.
async fn connection(
    tcp: tokio::net::TcpStream,
    router: Router,
    header_timeout: Duration,
    mut closed: watch::Receiver<bool>,
) {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .max_buf_size(READ_BUFFER)
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let (io, returned) = linger::Returned::new(tcp);
    let mut conn =
        Box::pin(builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(router)));
    let ended = tokio::select! {
        _ = conn.as_mut() => true,
        _ = closed.wait_for(|closed| *closed) => {
            conn.as_mut().graceful_shutdown();
            false
        }
    };
    if !ended {
        let _ = conn.as_mut().await;
    }
    // The connection owns the socket until it is dropped: only then does it come back.
    drop(conn);
    if let Ok(tcp) = returned.await {
        linger::linger(tcp).await;
    }
}

/// A TLS connection (the test stagings' HTTPS listener), served as [`connection`] is but
/// without the lingering close, which reads the raw socket.
async fn tls_connection<Io>(
    io: Io,
    router: Router,
    header_timeout: Duration,
    mut closed: watch::Receiver<bool>,
) where
    Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .max_buf_size(READ_BUFFER)
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let conn = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(router));
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = closed.wait_for(|closed| *closed) => conn.as_mut().graceful_shutdown(),
    }
    let _ = conn.await;
}

/// The most a connection's reader buffers at once (hyper's default grows to about 400 KiB).
/// A large body is handed on in pieces of the reader's buffer, each still held when the next
/// read comes, so each read of a megabyte body took a fresh buffer of hundreds of KiB (grown
/// by copying, its pages faulted in); pieces of 64 KiB are served from memory already in use.
const READ_BUFFER: usize = 64 * 1024;

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
    let read = async {
        match declared {
            // A large body is copied once, as it arrives, into a kept buffer (`pooled`).
            Some(len) if len as usize >= crate::pooled::FROM => {
                crate::pooled::read(body, len as usize, limits.max_body).await
            }
            _ => Ok(Limited::new(body, limits.max_body)
                .collect()
                .await?
                .to_bytes()),
        }
    };
    let bytes = match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(bytes)) => bytes,
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

/// A refusal that closes the connection: the rest of the body is only read to be discarded
/// (the lingering close). In JSON, as every error of a listener.
fn refusal(status: StatusCode, why: &str) -> Response {
    let mut response = json_error(status, why);
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Connections accepted and not yet served (waiting for their first byte, then for a slot):
/// four per slot, and at least 512, so hundreds of silent connections do not keep a real
/// request in the kernel's backlog.
const WAITING_PER_SLOT: usize = 4;
const MIN_WAITING: usize = 512;
/// Error texts longer than this (never the listeners' own) are cut in their JSON form.
const MAX_ERROR_TEXT: usize = 4096;

/// Marks an answer a listener passes on unchanged (the proxy's relayed answers): the JSON
/// errors layer leaves it as it is.
#[derive(Debug, Clone, Copy)]
pub struct Relayed;

/// `{"error": {"code", "message"}}`, the API's own error shape, with the status's name as code
/// (`PAYLOAD_TOO_LARGE`).
fn json_error(status: StatusCode, message: &str) -> Response {
    let code = status
        .canonical_reason()
        .unwrap_or("ERROR")
        .to_ascii_uppercase()
        .replace([' ', '-'], "_");
    let body = serde_json::json!({"error": {"code": code, "message": message.trim_end()}});
    (status, axum::Json(body)).into_response()
}

/// Every error answer in JSON: axum's own refusals (a path that is not UTF-8, a bad query) and
/// a handler's bare status come as plain text or nothing, which a client reading the API's
/// errors cannot read.
async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    if status.as_u16() < 400 || is_json || response.extensions().get::<Relayed>().is_some() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = match Limited::new(body, MAX_ERROR_TEXT).collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    let message = match text.trim() {
        "" => status.canonical_reason().unwrap_or("error").to_string(),
        text => text.to_string(),
    };
    let mut json = json_error(status, &message);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            json.headers_mut().insert(name.clone(), value.clone());
        }
    }
    json
}

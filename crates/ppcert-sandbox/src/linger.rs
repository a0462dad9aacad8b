//! What a listener does with a connection before and after HTTP: it waits for the first byte
//! of a request without holding one of the connection slots (an idle or half-open connection
//! cannot starve real requests), and closes lingering (reading and discarding what the client
//! still sends for a bounded time), so a client cut off mid-body reads its answer, a 413, not
//! a reset.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// A lingering close lasts at most this long in all...
pub(crate) const LINGER_TIME: Duration = Duration::from_secs(5);
/// ...ends after this long without a byte from the client...
pub(crate) const LINGER_IDLE: Duration = Duration::from_secs(2);
/// ...and reads (and discards) at most this much.
pub(crate) const LINGER_BYTES: usize = 16 << 20;

/// Whether a request starts on `tcp` within `deadline`: its first byte arrived (it is left
/// unread, for HTTP). `false` for a connection that closed, failed or stayed silent.
pub(crate) async fn first_byte(tcp: &TcpStream, deadline: Duration) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout(deadline, tcp.peek(&mut byte)).await,
        Ok(Ok(1..))
    )
}

/// A connection's socket that is handed back when HTTP is done with it (hyper drops its IO
/// when the connection ends), so that it can close lingering.
pub(crate) struct Returned {
    stream: Option<TcpStream>,
    back: Option<oneshot::Sender<TcpStream>>,
}

impl Returned {
    /// `tcp`, wrapped; the receiver gets it back when the wrapper is dropped.
    pub(crate) fn new(tcp: TcpStream) -> (Returned, oneshot::Receiver<TcpStream>) {
        let (back, returned) = oneshot::channel();
        let io = Returned {
            stream: Some(tcp),
            back: Some(back),
        };
        (io, returned)
    }

    fn stream(self: Pin<&mut Self>) -> Pin<&mut TcpStream> {
        // Only `Drop` takes the stream: it is always there while the wrapper is in use.
        Pin::new(
            self.get_mut()
                .stream
                .as_mut()
                .expect("the stream until drop"),
        )
    }
}

impl Drop for Returned {
    fn drop(&mut self) {
        if let (Some(stream), Some(back)) = (self.stream.take(), self.back.take()) {
            let _ = back.send(stream);
        }
    }
}

impl AsyncRead for Returned {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.stream().poll_read(cx, buf)
    }
}

impl AsyncWrite for Returned {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.stream().poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.stream().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.stream().poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.stream().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| s.is_write_vectored())
    }
}

/// Closes `tcp` as servers do after an answer that left the request unread: the sending side
/// first (the client sees the end of the answer), then what the client still sends is read
/// and discarded within [`LINGER_TIME`], [`LINGER_IDLE`] and [`LINGER_BYTES`]. Closing with
/// unread data would send a reset, and the client's TCP stack would drop the answer unread.
pub(crate) async fn linger(mut tcp: TcpStream) {
    let _ = std::future::poll_fn(|cx| Pin::new(&mut tcp).poll_shutdown(cx)).await;
    let end = tokio::time::Instant::now() + LINGER_TIME;
    let mut buf = vec![0u8; 64 * 1024];
    let mut read = 0;
    while read < LINGER_BYTES {
        let until = end.min(tokio::time::Instant::now() + LINGER_IDLE);
        match tokio::time::timeout_at(until, tcp.readable()).await {
            Ok(Ok(())) => match tcp.try_read(&mut buf) {
                Ok(0) => return,
                Ok(n) => read += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            },
            _ => return,
        }
    }
}

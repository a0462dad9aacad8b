//! Buffers for large request bodies, kept for the next one. A body of a megabyte read into a
//! fresh buffer costs a page fault for each of its 256 pages (ppcert's allocator gives freed
//! pages back to the system at once), more than copying it; and collecting a body's pieces
//! first kept every piece of the HTTP reader's buffer alive, so that buffer was new each time
//! too. A body is copied once, as it arrives, into a kept buffer.

use std::sync::Mutex;

use axum::body::{Body, Bytes};
use http_body_util::{BodyExt as _, Limited};

/// Bodies declared at least this long are read into a kept buffer; shorter ones arrive in one
/// piece of the reader's buffer and are not copied at all.
pub(crate) const FROM: usize = 64 * 1024;
/// The largest buffer kept, and how many at most: 8 MiB held at most, whatever the traffic.
pub(crate) const LARGEST: usize = 2 << 20;
pub(crate) const KEPT: usize = 4;

static FREE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// An empty buffer for a body of `len` bytes: a kept one that fits, else a new one (sized
/// to the next power of two, so that it fits the next body of about that size).
fn take(len: usize) -> Vec<u8> {
    if len > LARGEST {
        return Vec::with_capacity(len);
    }
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    match free.iter().position(|b| b.capacity() >= len) {
        Some(at) => free.swap_remove(at),
        None => Vec::with_capacity(len.next_power_of_two().min(LARGEST)),
    }
}

/// Reads `body` (declared `len` bytes long), within `max`, into a kept buffer. The buffer
/// goes back to be kept when the last `Bytes` of it is dropped.
pub(crate) async fn read(
    body: Body,
    len: usize,
    max: usize,
) -> Result<Bytes, Box<dyn std::error::Error + Send + Sync>> {
    let mut buffer = Returned(take(len));
    let mut body = Limited::new(body, max);
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            buffer.0.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from_owner(buffer))
}

/// A buffer that goes back to [`FREE`] when dropped (a body read whole or not).
struct Returned(Vec<u8>);

impl AsRef<[u8]> for Returned {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Returned {
    fn drop(&mut self) {
        let mut buffer = std::mem::take(&mut self.0);
        if buffer.capacity() > LARGEST {
            return;
        }
        buffer.clear();
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        if free.len() < KEPT {
            free.push(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept() -> usize {
        FREE.lock().unwrap().len()
    }

    /// However many large bodies are read at once, at most `KEPT` buffers stay afterwards,
    /// and a body reads back exactly as it was sent.
    #[tokio::test]
    async fn bodies_read_back_whole_and_at_most_kept_buffers_stay() {
        let sent: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut held = Vec::new();
        for _ in 0..3 * KEPT {
            let read = read(Body::from(sent.clone()), sent.len(), 1 << 20).await;
            let read = read.unwrap();
            assert_eq!(&read[..], &sent[..]);
            held.push(read);
        }
        drop(held);
        assert!(kept() <= KEPT, "{} buffers kept", kept());
        let again = read(Body::from(sent.clone()), sent.len(), 1 << 20).await;
        assert_eq!(&again.unwrap()[..], &sent[..]);
        let too_long = read(Body::from(sent.clone()), sent.len(), 1000).await;
        assert!(too_long.is_err());
        assert!(kept() <= KEPT);
    }
}

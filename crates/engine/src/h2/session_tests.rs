//! The HTTP/2 session (`session.rs`) driven over scripted sockets, with a real pool: in a file of
//! its own because the pool depends on connections, and a test inside the session that named the
//! pool would make the engine's module graph circular.
use super::session::run;
use crate::events::{self, Batch};
use crate::pool::Pool;
use crate::registry::EventSink;
use crate::request::StreamLength;
use parking_lot::Mutex;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Records every event as (kind, id, payload), and says when one arrives.
#[derive(Default)]
struct Events(Mutex<Vec<(u8, u32, Vec<u8>)>>, tokio::sync::Notify);
impl EventSink for Events {
    fn write(&self, write: &mut dyn FnMut(&mut Batch)) -> bool {
        let mut batch = Batch::default();
        write(&mut batch);
        let (b, mut at) = (&batch.bytes, 0);
        while at + 9 <= b.len() {
            let id = u32::from_le_bytes(b[at + 1..at + 5].try_into().unwrap());
            let len = u32::from_le_bytes(b[at + 5..at + 9].try_into().unwrap()) as usize;
            self.0.lock().push((b[at], id, b[at + 9..at + 9 + len].to_vec()));
            at += 9 + len;
        }
        self.1.notify_waiters();
        false
    }
    fn signal(&self) {}
    fn congested(&self, _: &Waker) -> bool {
        false
    }
}

impl Events {
    /// The payload of the first `kind` event for `id`, or None if none came within 2 s.
    async fn until(&self, kind: u8, id: u32) -> Option<Vec<u8>> {
        let found = async {
            loop {
                // Registered before looking, so an event written in between still wakes it.
                let arrived = self.1.notified();
                if let Some((_, _, p)) = self.0.lock().iter().find(|(k, i, _)| *k == kind && *i == id) {
                    return p.clone();
                }
                arrived.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(2), found).await.ok()
    }
}

/// A socket that takes what is written until `broken` is set, then fails every write with
/// EPIPE; nothing ever arrives to read.
struct BreaksOnWrite(Arc<AtomicBool>);
impl AsyncRead for BreaksOnWrite {
    fn poll_read(self: Pin<&mut Self>, _: &mut Context<'_>, _: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}
impl AsyncWrite for BreaksOnWrite {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if self.0.load(Ordering::SeqCst) {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn a_socket_that_fails_on_write_fails_the_request_waiting_for_its_response() {
    // h2 returns a failed write from its connection without waking the streams: the session
    // must still end them (this hung, under load, in the TLS suite).
    let events = Arc::new(Events::default());
    let pool = Pool::for_test(events.clone());
    let broken = Arc::new(AtomicBool::new(false));
    tokio::spawn(run(pool.clone(), 0, BreaksOnWrite(broken.clone()), "a|b".into()));
    assert!(events.until(events::CONNECTED, 1).await.is_some(), "the handshake completes");
    broken.store(true, Ordering::SeqCst);
    pool.dispatch(7, "GET\0/\0".into(), None, 0, StreamLength::Chunked, None, None, true).unwrap();
    let err = events.until(events::ERROR, 7).await.expect("the request fails instead of waiting forever");
    let message = String::from_utf8_lossy(&err[4..]).into_owned();
    assert!(message.starts_with("HTTP/2: "), "{message}");
}

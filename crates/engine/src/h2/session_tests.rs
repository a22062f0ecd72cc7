//! The HTTP/2 session (`session.rs`) driven over scripted sockets, with a real pool: in a file of
//! its own because the pool depends on connections, and a test inside the session that named the
//! pool would make the engine's module graph circular.
use super::session::run;
use crate::events;
use crate::pool::Pool;
use crate::request::StreamLength;
use crate::test_events::Events;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

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

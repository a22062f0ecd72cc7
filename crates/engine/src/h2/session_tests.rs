//! The HTTP/2 session (`session.rs`) driven over scripted sockets, with a real pool: in a file of
//! its own because the pool depends on connections, and a test inside the session that named the
//! pool would make the engine's module graph circular.
use super::session::run;
use crate::events;
use crate::owner::ConnOwner;
use crate::pool::Pool;
use crate::request::{flags, StreamLength};
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
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}
impl AsyncWrite for BreaksOnWrite {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
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
    pool.dispatch(7, "GET\0/\0".into(), None, 0, StreamLength::Chunked, None, None).unwrap();
    pool.kick();
    let err =
        events.until(events::ERROR, 7).await.expect("the request fails instead of waiting forever");
    let (_, _, _, message) = crate::test_events::error_record(&err);
    assert!(message.starts_with("HTTP/2: "), "{message}");
}

/// An HTTP/2 frame: 24-bit length, type, flags, stream id, payload.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend_from_slice(&[kind, flags]);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// Runs a session over an in-memory socket with request 7 dispatched and paused; the server
/// writes `server` and closes. Once the pool heard `disconnect`, JS resumes: the request must
/// fail, not wait forever; returns the kinds of 7's events.
async fn resumed_after_the_connection_ended(server: Vec<u8>) -> Vec<u8> {
    use tokio::io::AsyncWriteExt;
    let events = Arc::new(Events::default());
    let pool = Pool::for_test(events.clone());
    let (client, mut peer) = tokio::io::duplex(1 << 20);
    tokio::spawn(run(pool.clone(), 0, client, "a|b".into()));
    assert!(events.until(events::CONNECTED, 1).await.is_some(), "the handshake completes");
    pool.dispatch(7, "GET\0/\0".into(), None, flags::OBSERVE, StreamLength::Chunked, None, None)
        .unwrap();
    pool.kick();
    let ctl = pool.shared().ctl(7).expect("registered");
    ctl.pause();
    // The stream is open before the server answers on it.
    assert!(events.until(events::SENT, 7).await.is_some(), "the request is sent");
    peer.write_all(&server).await.unwrap();
    drop(peer);
    assert!(
        events.until(events::DISCONNECTED, 1).await.is_some(),
        "the session sees the end of file"
    );
    ctl.resume();
    // Within 2 s (a tokio timeout in `until`), not forever.
    events.until(events::ERROR, 7).await.expect("the resumed request fails");
    events.kinds(7)
}

#[tokio::test]
async fn a_request_resumed_after_a_cut_settings_frame_ended_the_connection_fails() {
    // The h2_session fuzzer's finding (config 0x40): a SETTINGS frame declaring 221 bytes, fewer
    // arriving before end of file, the request paused and resumed as the connection ends.
    let settings = frame(4, 0, 0, &[0; 221]);
    let kinds = resumed_after_the_connection_ended(settings[..40].to_vec()).await;
    assert_eq!(kinds, [events::SENT, events::ERROR]);
}

#[tokio::test]
async fn a_request_paused_in_its_body_and_resumed_after_the_connection_ended_fails() {
    // Head and 3 of 10 bytes arrive while JS is paused, then end of file: on resume JS gets the
    // bytes held and then the error (a truncated body is an error, not a short success).
    let mut server = frame(4, 0, 0, &[]);
    server.extend(frame(1, 4, 1, &[0x88, 0x0f, 0x0d, 2, b'1', b'0']));
    server.extend(frame(0, 0, 1, b"abc"));
    let kinds = resumed_after_the_connection_ended(server).await;
    assert_eq!(kinds, [events::SENT, events::HEAD, events::DATA, events::ERROR]);
}

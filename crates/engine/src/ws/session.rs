//! The WebSocket session: a connection upgraded by a WebSocket handshake, once JS has checked the
//! server's answer, run by the engine until it closes. It reads the socket and decodes frames
//! (`channel.rs`), answers pings and the server's close as RFC 6455 asks, hands JS whole messages,
//! pings, pongs, the close and failures as the request's engine events, and frames, masks,
//! compresses and writes the messages JS queues in the request's pipe. Its last event is END (the
//! connection closed) or ERROR (it failed), unless JS aborted it.
//!
//! Reading stops while JS is behind (the event queue is congested, or JS paused the request), and
//! while our own replies (pongs) fill the write queue: a server that sends pings and never reads
//! cannot grow it (GHSA-9fm3-97px-rjf6). If such a server takes none of our bytes for
//! `Start::stalled_write`, the connection fails with 1008.
use super::channel::Channel;
use super::close::close_code::POLICY_VIOLATION;
use super::start::Start;
use crate::conn::buffers::Buffers;
use crate::driver::Timer;
use crate::error::ErrorCode;
use crate::events;
use crate::registry::{EventSink, Shared};
use crate::request::{ReqCtl, PIPE_HIGH_WATER};
use bytes::Buf;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite};

/// Rounds of read/write work per poll before the session lets other connections run.
const BUDGET: usize = 16;

/// Write-queue bytes at which reading stops while replies of ours wait in it: Node's default
/// high-water mark for a socket, where a JS-driven WebSocket stopped before.
pub const REPLY_HIGH_WATER: usize = 16 * 1024;

/// How an upgraded WebSocket connection goes on: waits until JS started the WebSocket session
/// (`ReqCtl::start_websocket`: Some) or asked for its bytes as a plain tunnel, or aborted (None).
/// Nothing is read meanwhile: the request is paused from the 101 on.
pub(crate) async fn started(ctl: &ReqCtl) -> Option<Start> {
    poll_fn(|cx| {
        ctl.set_waker(cx.waker());
        if let Some(start) = ctl.take_websocket() {
            Poll::Ready(Some(start))
        } else if ctl.aborted() || !ctl.paused() {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    })
    .await
}

/// Runs the session to its end: Ok(why) when it closed (JS has had its END, or aborted), Err
/// when the socket failed (JS has had the ERROR).
pub(crate) async fn run<T: AsyncRead + AsyncWrite + Unpin>(
    shared: Arc<Shared>,
    io: T,
    bufs: Buffers,
    id: u32,
    ctl: Arc<ReqCtl>,
    start: Start,
) -> io::Result<&'static str> {
    let mut s = Session {
        sink: shared.sink.clone(),
        shared,
        io,
        bufs,
        id,
        ctl,
        chan: Channel::new(id, start.codec()),
        write_closed: false,
        drain_owed: false,
        taken: 0,
        replied: None,
        blocked: false,
        stalled_write: start.stalled_write,
        stall: None,
        settled: false,
    };
    let end = poll_fn(|cx| s.poll(cx)).await;
    s.finish(&end);
    end
}

struct Session<T> {
    shared: Arc<Shared>,
    sink: Arc<dyn EventSink>,
    io: T,
    bufs: Buffers,
    id: u32,
    ctl: Arc<ReqCtl>,
    chan: Channel,
    write_closed: bool,
    /// JS waits for BODY_DRAIN (its sends reached the pipe's high-water mark).
    drain_owed: bool,
    /// Bytes of JS's chunks taken from the pipe so far: BODY_DRAIN's payload (u64 LE), so JS
    /// lets go of exactly the sends made before it (those after may still wait in the pipe).
    taken: u64,
    /// The last feed made replies; whether the write queue was full before them.
    replied: Option<bool>,
    /// Reading waits for the write queue to drain below `REPLY_HIGH_WATER`.
    blocked: bool,
    stalled_write: Option<std::time::Duration>,
    /// While blocked by our replies: fires after `stalled_write`; the bytes written when armed.
    stall: Option<(Timer, u64)>,
    /// JS heard how the session ended (`finish`).
    settled: bool,
}

impl<T: AsyncRead + AsyncWrite + Unpin> Session<T> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<&'static str>> {
        // JS's sends, pause / resume and abort wake this task (kept once per task).
        self.ctl.set_waker(cx.waker());
        for _ in 0..BUDGET {
            if self.ctl.aborted() {
                return Poll::Ready(Ok("websocket closed"));
            }
            let mut progress = self.send(cx)?;
            if let Some(end) = self.check_stall(cx) {
                return Poll::Ready(Ok(end));
            }
            if !self.blocked && !self.ctl.paused() && !self.sink.congested(cx.waker()) {
                if self.bufs.rbuf.is_empty() {
                    match self.bufs.read(&mut self.io, cx) {
                        // The server's end closes the connection, as a WebSocket's socket did.
                        Poll::Ready(Ok(0)) => return Poll::Ready(Ok("closed by the server")),
                        Poll::Ready(Ok(_)) => {}
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                        Poll::Pending => {}
                    }
                }
                if !self.bufs.rbuf.is_empty() {
                    self.feed();
                    progress = true;
                }
            }
            if !progress {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Frames what JS queued, writes, and half-closes once the closing handshake is done (or we
    /// failed the connection). Whether anything moved.
    fn send(&mut self, cx: &mut Context<'_>) -> io::Result<bool> {
        if self.write_closed {
            return Ok(false);
        }
        let mut progress = false;
        // As the tunnel: take more only once the socket took most of what we hold.
        if self.bufs.wbuf.len() < PIPE_HIGH_WATER {
            let taken = self.ctl.take_body();
            progress |= !taken.chunks.is_empty();
            for chunk in taken.chunks {
                self.taken += chunk.len() as u64;
                self.chan.send(chunk, &mut self.bufs.wbuf);
            }
            self.drain_owed |= taken.drained;
        }
        progress |= self.bufs.write(&mut self.io, cx)?.0;
        let queued = self.bufs.wbuf.len();
        if self.drain_owed && queued < PIPE_HIGH_WATER {
            self.drain_owed = false;
            let (id, taken) = (self.id, self.taken);
            self.shared.emit(|w| w.bytes(events::BODY_DRAIN, id, &taken.to_le_bytes()));
        }
        if let Some(full_before) = self.replied.take() {
            if queued >= REPLY_HIGH_WATER && !self.blocked {
                self.blocked = true;
                // A queue already full of the application's own messages is its backpressure
                // (bufferedAmount), not a server refusing to read: that never fails.
                if !full_before {
                    self.stall = self.stalled_write.map(|d| (Timer::after(d), self.bufs.sent()));
                }
            }
        } else if self.blocked && queued < REPLY_HIGH_WATER {
            self.blocked = false;
            self.stall = None;
            progress = true;
        }
        if self.chan.finished_reading() && queued == 0 {
            if let Poll::Ready(r) = Pin::new(&mut self.io).poll_shutdown(cx) {
                // A failed half-close leaves nothing to do but wait for the server's end.
                let _ = r;
                self.write_closed = true;
                progress = true;
            }
        }
        Ok(progress)
    }

    /// Decodes what was read (all of it, or up to the codec's reply budget).
    fn feed(&mut self) {
        let full_before = self.bufs.wbuf.len() >= REPLY_HIGH_WATER;
        let Buffers { rbuf, wbuf, .. } = &mut self.bufs;
        let chan = &mut self.chan;
        let mut fed = None;
        self.shared.emit(|w| fed = Some(chan.feed(rbuf, w, wbuf)));
        let fed = fed.expect("emit runs its writer");
        rbuf.advance(fed.took);
        if fed.replied {
            self.replied = Some(full_before);
        }
    }

    /// While our replies wait for a server that reads nothing: the reason the connection fails
    /// once it took none of them for `stalled_write` (re-armed while it takes some).
    fn check_stall(&mut self, cx: &mut Context<'_>) -> Option<&'static str> {
        let (timer, mark) = self.stall.as_mut()?;
        if Pin::new(&mut *timer).poll(cx).is_pending() {
            return None;
        }
        let sent = self.bufs.sent();
        if sent > *mark {
            let d = self.stalled_write.expect("armed only with a timeout");
            self.stall = Some((Timer::after(d), sent));
            // Registers the new deadline with the waker.
            return self.check_stall(cx);
        }
        let reason = format!(
            "the server left {} bytes of our frames unread for {} ms",
            self.bufs.wbuf.len(),
            self.stalled_write.map_or(0, |d| d.as_millis())
        );
        let id = self.id;
        self.shared.emit(|w| {
            let mut p = POLICY_VIOLATION.to_le_bytes().to_vec();
            p.extend_from_slice(reason.as_bytes());
            w.bytes(events::WS_FAIL, id, &p);
        });
        // Our close frame would queue behind what the server does not read: the connection ends.
        Some("stalled")
    }

    /// The request's last event: END unless JS aborted, or the socket's failure.
    fn finish(&mut self, end: &io::Result<&'static str>) {
        self.settled = true;
        let id = self.id;
        match end {
            Err(e) => {
                let (errno, message) = (crate::error::errno_name(e), e.to_string());
                self.shared
                    .emit(|w| w.error(events::ERROR, id, ErrorCode::Socket, errno, &message));
            }
            Ok(_) if !self.ctl.aborted() => self.shared.emit(|w| w.end(id, None)),
            Ok(_) => {}
        }
        self.shared.forget(id);
    }
}

impl<T> Drop for Session<T> {
    /// Torn down (a panic, the runtime shutting down) before `finish`: JS must not wait for ever.
    fn drop(&mut self) {
        if !self.settled {
            let id = self.id;
            self.shared.emit(|w| {
                w.error(
                    events::ERROR,
                    id,
                    ErrorCode::Internal,
                    "",
                    "connection task ended unexpectedly",
                )
            });
            self.shared.forget(id);
        }
    }
}

//! The tunnel session: the connection after a 101 or a CONNECT 2xx (`End::Upgraded`), a byte
//! tunnel between JS and the server. What JS writes goes out through the request's pipe; what the
//! server sends comes back as DATA, its end as END; either side may half-close. The connection
//! left the pool when it was upgraded: this session answers to its one request only.
use super::buffers::Buffers;
use super::session::{fail_lost, End, Upgraded, BUDGET};
use crate::events;
use crate::owner::ConnOwner;
use crate::registry::{EventSink, Shared};
use crate::request::{ReqCtl, PIPE_HIGH_WATER};
use crate::transport::Transport;
use crate::ws;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;

/// Bytes both ways until both sides are closed, JS aborts, or I/O fails; then the request's END
/// (or ERROR).
pub(super) async fn run(pool: Arc<dyn ConnOwner>, up: Upgraded) -> End {
    let Upgraded { io, mut bufs, id, ctl } = up;
    let shared = pool.shared().clone();
    // A WebSocket handshake's: the engine's WebSocket session takes over once JS checked the
    // answer, unless JS reads it as a plain tunnel after all.
    if ctl.held_for_websocket() {
        if let Some(start) = ws::session::started(&ctl).await {
            return match ws::session::run(shared, io, bufs, id, ctl, start).await {
                Ok(why) => End::Clean(why),
                Err(e) => End::io(e),
            };
        }
    }
    // Bytes the server sent right behind the head are the tunnel's first.
    if !bufs.rbuf.is_empty() {
        let rest = bufs.rbuf.split().freeze();
        shared.emit(|w| w.data(id, rest));
    }
    let mut t = Tunnel {
        sink: shared.sink.clone(),
        shared,
        pool,
        io,
        bufs,
        id,
        ctl,
        read_eof: false,
        end_requested: false,
        write_closed: false,
        drain_owed: false,
        settled: false,
    };
    let end = poll_fn(|cx| t.poll(cx)).await;
    t.finish(&end);
    end
}

struct Tunnel {
    pool: Arc<dyn ConnOwner>,
    shared: Arc<Shared>,
    sink: Arc<dyn EventSink>,
    io: Transport,
    bufs: Buffers,
    id: u32,
    ctl: Arc<ReqCtl>,
    read_eof: bool,
    end_requested: bool,
    write_closed: bool,
    /// JS waits for BODY_DRAIN. It is sent once what the tunnel holds fell below the high-water
    /// mark, not when it took JS's bytes: one large write (a batch of WebSocket frames) would
    /// otherwise count as written while it still sits here (`bufferedAmount` would read 0).
    drain_owed: bool,
    /// The request heard how the tunnel ended (`finish`).
    settled: bool,
}

impl Tunnel {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<End> {
        for _ in 0..BUDGET {
            if self.ctl.aborted() {
                return Poll::Ready(End::Clean("tunnel closed"));
            }
            let id = self.id;
            let mut progress = false;
            if !self.write_closed {
                // As for streamed bodies: take more only once the socket took most of what we hold.
                if self.bufs.wbuf.len() < PIPE_HIGH_WATER {
                    let taken = self.ctl.take_body();
                    progress |= !taken.chunks.is_empty();
                    for chunk in &taken.chunks {
                        self.bufs.wbuf.extend_from_slice(chunk);
                    }
                    self.drain_owed |= taken.drained;
                    if taken.ended {
                        self.end_requested = true;
                    }
                }
                progress |= match self.bufs.write(&mut self.io, cx) {
                    Ok((p, _)) => p,
                    Err(e) => return Poll::Ready(End::io(e)),
                };
                if self.drain_owed && self.bufs.wbuf.len() < PIPE_HIGH_WATER {
                    self.drain_owed = false;
                    self.shared.emit(|w| w.empty(events::BODY_DRAIN, id));
                }
                if self.end_requested && self.bufs.wbuf.is_empty() {
                    match Pin::new(&mut self.io).poll_shutdown(cx) {
                        Poll::Ready(_) => {
                            self.write_closed = true;
                            progress = true;
                        }
                        Poll::Pending => {}
                    }
                }
            }
            if !self.read_eof && !self.ctl.paused() && !self.sink.congested(cx.waker()) {
                match self.bufs.read(&mut self.io, cx) {
                    Poll::Ready(Ok(0)) => {
                        self.shared.emit(|w| w.end(id, None));
                        self.read_eof = true;
                        progress = true;
                    }
                    Poll::Ready(Ok(_)) => {
                        let data = self.bufs.rbuf.split().freeze();
                        self.shared.emit(|w| w.data(id, data));
                        progress = true;
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(End::io(e)),
                    Poll::Pending => {}
                }
            }
            if self.read_eof && self.write_closed {
                return Poll::Ready(End::Clean("tunnel ended"));
            }
            if !progress {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// The request's last event: the failure, or END unless the server's end was already
    /// reported or JS aborted.
    fn finish(&mut self, end: &End) {
        self.settled = true;
        let id = self.id;
        if let End::Failed { code, errno, message } = end {
            self.shared.emit(|w| w.error(events::ERROR, id, *code, errno, message));
        } else if !self.read_eof && !self.ctl.aborted() {
            self.shared.emit(|w| w.end(id, None));
        }
        self.shared.forget(id);
    }
}

impl Drop for Tunnel {
    /// Torn down (a panic, the runtime shutting down) before `finish`.
    fn drop(&mut self) {
        if !self.settled {
            fail_lost(&*self.pool, &[self.id]);
        }
    }
}

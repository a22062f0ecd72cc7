//! The connection after a 101 or a CONNECT 2xx: a byte tunnel between JS and the server. What JS
//! writes goes out through the request's pipe; what the server sends comes back as DATA, its end
//! as END; either side may half-close.
use super::buffers::Buffers;
use super::session::{End, BUDGET};
use crate::events;
use crate::registry::{EventSink, Shared};
use crate::request::{ReqCtl, PIPE_HIGH_WATER};
use crate::transport::Transport;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;

pub(super) struct Tunnel {
    pub id: u32,
    pub ctl: Arc<ReqCtl>,
    pub read_eof: bool,
    end_requested: bool,
    write_closed: bool,
    /// JS waits for BODY_DRAIN. It is sent once what the tunnel holds fell below the high-water
    /// mark, not when it took JS's bytes: one large write (a batch of WebSocket frames) would
    /// otherwise count as written while it still sits here (`bufferedAmount` would read 0).
    drain_owed: bool,
}

impl Tunnel {
    pub fn new(id: u32, ctl: Arc<ReqCtl>) -> Tunnel {
        Tunnel {
            id,
            ctl,
            read_eof: false,
            end_requested: false,
            write_closed: false,
            drain_owed: false,
        }
    }

    /// Bytes both ways until both sides are closed, JS aborts, or I/O fails.
    pub fn poll(
        &mut self,
        io: &mut Transport,
        bufs: &mut Buffers,
        shared: &Shared,
        sink: &dyn EventSink,
        cx: &mut Context<'_>,
    ) -> Poll<End> {
        for _ in 0..BUDGET {
            let t = &mut *self;
            if t.ctl.aborted() {
                return Poll::Ready(End::Clean("tunnel closed"));
            }
            let (id, ctl) = (t.id, t.ctl.clone());
            let mut progress = false;
            if !t.write_closed {
                // As for streamed bodies: take more only once the socket took most of what we hold.
                if bufs.wbuf.len() < PIPE_HIGH_WATER {
                    let taken = ctl.take_body();
                    progress |= !taken.chunks.is_empty();
                    for chunk in &taken.chunks {
                        bufs.wbuf.extend_from_slice(chunk);
                    }
                    t.drain_owed |= taken.drained;
                    if taken.ended {
                        t.end_requested = true;
                    }
                }
                progress |= match bufs.write(io, cx) {
                    Ok((p, _)) => p,
                    Err(e) => return Poll::Ready(End::io(e)),
                };
                if t.drain_owed && bufs.wbuf.len() < PIPE_HIGH_WATER {
                    t.drain_owed = false;
                    shared.emit(|w| w.empty(events::BODY_DRAIN, id));
                }
                if t.end_requested && bufs.wbuf.is_empty() {
                    match Pin::new(&mut *io).poll_shutdown(cx) {
                        Poll::Ready(_) => {
                            t.write_closed = true;
                            progress = true;
                        }
                        Poll::Pending => {}
                    }
                }
            }
            if !self.read_eof && !ctl.paused() && !sink.congested(cx.waker()) {
                match bufs.read(io, cx) {
                    Poll::Ready(Ok(0)) => {
                        shared.emit(|w| w.end(id, None));
                        self.read_eof = true;
                        progress = true;
                    }
                    Poll::Ready(Ok(_)) => {
                        let data = bufs.rbuf.split().freeze();
                        shared.emit(|w| w.data(id, data));
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
}

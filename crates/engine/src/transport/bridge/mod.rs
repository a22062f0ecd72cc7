//! The bridged transport: the bytes of a socket that lives in JavaScript (what a custom `connect`
//! function returned). Inbound bytes are fed by JS (`Engine::bridge_data`) into the socket's
//! [`link::BridgeLink`]; outbound bytes leave as BRIDGE_WRITE events that JS writes to the socket.
pub mod link;

use crate::error::ErrorCode;
use crate::events::{self, Writer};
use crate::inbox::store_waker;
use crate::registry::Shared;
use crate::transport::error::ConnectError;
use link::LOW_WATER;
pub use link::{Attach, BridgeLink};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::oneshot;

/// One end of a bridged socket, owned by a connection. Dropping it tells JS to destroy the socket.
pub struct BridgeIo {
    link: Arc<BridgeLink>,
    shared: Arc<Shared>,
    write_ended: bool,
}

impl BridgeIo {
    fn emit(&self, f: impl FnOnce(&mut Writer<'_>)) {
        self.shared.emit(f);
    }
}

/// Asks JS for a socket (BRIDGE_OPEN) and waits for its answer, at most `timeout`. Returns the
/// transport and its address string.
pub(crate) async fn open(
    shared: &Arc<Shared>,
    pool_id: u32,
    timeout: Option<Duration>,
) -> Result<(BridgeIo, String), ConnectError> {
    let (tx, rx) = oneshot::channel();
    let link = shared.register_bridge(|id| BridgeLink::new(id, tx));
    let io = BridgeIo { link, shared: shared.clone(), write_ended: false };
    io.emit(|w| w.bridge_open(pool_id, io.link.id));
    let answer = match timeout {
        Some(t) => match crate::driver::timer::timeout(t, rx).await {
            Ok(a) => a,
            // `io` drops here: BRIDGE_CLOSE tells JS to destroy the socket if it still comes.
            Err(_) => return Err(ConnectError::Timeout),
        },
        None => rx.await,
    };
    match answer {
        Ok(Attach::Ok { addrs }) => Ok((io, addrs)),
        Ok(Attach::Failed { code, errno, message }) => {
            Err(ConnectError::Bridge { code, errno, message })
        }
        // The sender lives in the link, which `io` keeps alive: unreachable, but not worth a panic.
        Err(_) => Err(ConnectError::Bridge {
            code: ErrorCode::Socket,
            errno: String::new(),
            message: "the bridged socket went away before it was attached".into(),
        }),
    }
}

impl Drop for BridgeIo {
    fn drop(&mut self) {
        self.shared.forget_bridge(self.link.id);
        let id = self.link.id;
        self.emit(|w| w.empty(events::BRIDGE_CLOSE, id));
    }
}

impl AsyncRead for BridgeIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let mut st = this.link.state.lock();
        if st.inbox.bytes == 0 {
            if let Some((kind, msg)) = &st.error {
                return Poll::Ready(Err(io::Error::new(*kind, msg.clone())));
            }
            if st.eof {
                return Poll::Ready(Ok(()));
            }
            store_waker(&mut st.reader, cx.waker());
            return Poll::Pending;
        }
        let mut copied = 0;
        while buf.remaining() > 0 {
            let offset = st.offset;
            let Some(front) = st.inbox.chunks.front() else { break };
            let n = (front.len() - offset).min(buf.remaining());
            buf.put_slice(&front[offset..offset + n]);
            copied += n;
            if offset + n == front.len() {
                st.inbox.chunks.pop_front();
                st.offset = 0;
            } else {
                st.offset = offset + n;
            }
        }
        st.inbox.bytes -= copied;
        let drained = st.inbox.drain_wanted && st.inbox.bytes < LOW_WATER;
        if drained {
            st.inbox.drain_wanted = false;
        }
        drop(st);
        if drained {
            let id = this.link.id;
            this.emit(|w| w.empty(events::BRIDGE_DRAIN, id));
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for BridgeIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        {
            let mut st = this.link.state.lock();
            if let Some((kind, msg)) = &st.error {
                return Poll::Ready(Err(io::Error::new(*kind, msg.clone())));
            }
            if this.write_ended {
                return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
            }
            if st.write_blocked {
                store_waker(&mut st.writer, cx.waker());
                return Poll::Pending;
            }
        }
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let id = this.link.id;
        this.emit(|w| w.bytes(events::BRIDGE_WRITE, id, data));
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.write_ended {
            this.write_ended = true;
            let id = this.link.id;
            this.emit(|w| w.empty(events::BRIDGE_END, id));
        }
        Poll::Ready(Ok(()))
    }
}

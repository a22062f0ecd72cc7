//! The bridged transport: the bytes of a socket that lives in JavaScript (what a custom `connect`
//! function returned). Inbound bytes are fed by JS (`Engine::bridge_data`) into a bounded queue;
//! outbound bytes leave as BRIDGE_WRITE events that JS writes to the socket. A `BridgeLink` is the
//! state both sides share; the engine's bridge table maps bridge ids to links so calls from JS
//! find their connection.
use crate::engine::Shared;
use crate::error::ErrorCode;
use crate::events::{self, Writer};
use crate::transport::ConnectError;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::oneshot;

/// Inbound bytes queued beyond this make `bridge_data` return false: JS pauses the socket until a
/// BRIDGE_DRAIN event.
pub const HIGH_WATER: usize = 256 * 1024;
/// BRIDGE_DRAIN is sent once the queue falls below this, so a paused socket doesn't flap.
const LOW_WATER: usize = HIGH_WATER / 4;

/// JS's answer to BRIDGE_OPEN.
pub enum Attach {
    /// The socket is there. `addrs` is "localIp|localPort|remoteIp|remotePort" plus "|tls|<alpn>"
    /// for TLS sockets (the format upgraded sockets report, see `events.rs`).
    Ok { addrs: String },
    Failed { code: ErrorCode, errno: String, message: String },
}

#[derive(Default)]
struct LinkState {
    inbound: VecDeque<Vec<u8>>,
    /// Bytes of the front chunk already read.
    offset: usize,
    /// Unread inbound bytes.
    bytes: usize,
    eof: bool,
    error: Option<(io::ErrorKind, String)>,
    reader: Option<Waker>,
    /// JS was told to stop feeding (bridge_data returned false).
    drain_wanted: bool,
    /// JS's socket buffer is full: writes wait for `set_writable(true)`.
    write_blocked: bool,
    writer: Option<Waker>,
    attach: Option<oneshot::Sender<Attach>>,
}

/// What the engine and the JS thread share about one bridged socket.
pub struct BridgeLink {
    pub id: u32,
    state: Mutex<LinkState>,
}

fn store_waker(slot: &mut Option<Waker>, w: &Waker) {
    match slot {
        Some(old) if old.will_wake(w) => {}
        _ => *slot = Some(w.clone()),
    }
}

/// The `io::ErrorKind` of a Node error code, so `errno_name` gives the same code back.
fn kind_of(errno: &str) -> io::ErrorKind {
    use io::ErrorKind::*;
    match errno {
        "ECONNRESET" => ConnectionReset,
        "ECONNREFUSED" => ConnectionRefused,
        "ECONNABORTED" => ConnectionAborted,
        "EPIPE" => BrokenPipe,
        "ETIMEDOUT" => TimedOut,
        "EHOSTUNREACH" => HostUnreachable,
        "ENETUNREACH" => NetworkUnreachable,
        "EADDRINUSE" => AddrInUse,
        "EADDRNOTAVAIL" => AddrNotAvailable,
        "ENOENT" => NotFound,
        "EACCES" => PermissionDenied,
        _ => Other,
    }
}

impl BridgeLink {
    fn new(id: u32, attach: oneshot::Sender<Attach>) -> BridgeLink {
        BridgeLink { id, state: Mutex::new(LinkState { attach: Some(attach), ..LinkState::default() }) }
    }

    /// Bytes that arrived on the JS socket. False once JS should pause the socket and wait for
    /// BRIDGE_DRAIN.
    pub fn push(&self, chunk: Vec<u8>) -> bool {
        let (below, reader) = {
            let mut st = self.state.lock();
            if st.eof || st.error.is_some() {
                return true; // the read side is over; late bytes are dropped
            }
            st.bytes += chunk.len();
            if !chunk.is_empty() {
                st.inbound.push_back(chunk);
            }
            let below = st.bytes < HIGH_WATER;
            if !below {
                st.drain_wanted = true;
            }
            (below, st.reader.take())
        };
        if let Some(w) = reader {
            w.wake();
        }
        below
    }

    /// The socket ended (or closed): reads return EOF once the queue is empty.
    pub fn end(&self) {
        let reader = {
            let mut st = self.state.lock();
            st.eof = true;
            st.reader.take()
        };
        if let Some(w) = reader {
            w.wake();
        }
    }

    /// The socket failed: reads (after what is queued) and writes fail with this error.
    pub fn fail(&self, errno: &str, message: &str) {
        let (reader, writer) = {
            let mut st = self.state.lock();
            if st.error.is_none() {
                st.error = Some((kind_of(errno), message.to_owned()));
            }
            (st.reader.take(), st.writer.take())
        };
        for w in [reader, writer].into_iter().flatten() {
            w.wake();
        }
    }

    /// JS's socket buffer is full (false) or drained (true).
    pub fn set_writable(&self, writable: bool) {
        let writer = {
            let mut st = self.state.lock();
            st.write_blocked = !writable;
            if writable {
                st.writer.take()
            } else {
                None
            }
        };
        if let Some(w) = writer {
            w.wake();
        }
    }

    /// Answers BRIDGE_OPEN. False when nobody waits any more (the connect timed out, the pool was
    /// destroyed, or it was answered already): JS then destroys the socket.
    pub fn answer(&self, attach: Attach) -> bool {
        let tx = self.state.lock().attach.take();
        match tx {
            Some(tx) => tx.send(attach).is_ok(),
            None => false,
        }
    }
}

/// One end of a bridged socket, owned by a connection. Dropping it tells JS to destroy the socket.
pub struct BridgeIo {
    link: Arc<BridgeLink>,
    shared: Arc<Shared>,
    write_ended: bool,
}

impl BridgeIo {
    fn emit(&self, f: impl FnOnce(&mut Writer<'_>)) {
        let mut f = Some(f);
        self.shared.write_events(&mut |q| {
            if let Some(f) = f.take() {
                f(&mut Writer::new(q));
            }
        });
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
        Ok(Attach::Failed { code, errno, message }) => Err(ConnectError::Bridge { code, errno, message }),
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
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let mut st = this.link.state.lock();
        if st.bytes == 0 {
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
            let Some(front) = st.inbound.front() else { break };
            let n = (front.len() - offset).min(buf.remaining());
            buf.put_slice(&front[offset..offset + n]);
            copied += n;
            if offset + n == front.len() {
                st.inbound.pop_front();
                st.offset = 0;
            } else {
                st.offset = offset + n;
            }
        }
        st.bytes -= copied;
        let drained = st.drain_wanted && st.bytes < LOW_WATER;
        if drained {
            st.drain_wanted = false;
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
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_kinds_round_trip() {
        for name in ["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "ENOENT"] {
            assert_eq!(crate::error::errno_name(&io::Error::new(kind_of(name), "x")), name);
        }
        assert_eq!(kind_of("ERR_WHATEVER"), io::ErrorKind::Other);
        assert_eq!(kind_of(""), io::ErrorKind::Other);
    }

    #[test]
    fn push_reports_the_high_water_mark() {
        let (tx, _rx) = oneshot::channel();
        let link = BridgeLink::new(1, tx);
        assert!(link.push(vec![0; HIGH_WATER - 1]));
        assert!(!link.push(vec![0; 1]));
        assert!(link.state.lock().drain_wanted);
        link.end();
        // After the end, bytes are dropped and never block.
        assert!(link.push(vec![0; HIGH_WATER]));
        assert_eq!(link.state.lock().bytes, HIGH_WATER);
    }

    #[test]
    fn answers_once() {
        let (tx, mut rx) = oneshot::channel();
        let link = BridgeLink::new(1, tx);
        assert!(link.answer(Attach::Ok { addrs: "|||".into() }));
        assert!(!link.answer(Attach::Ok { addrs: "|||".into() }));
        assert!(matches!(rx.try_recv(), Ok(Attach::Ok { .. })));
        let (tx, rx) = oneshot::channel();
        let link = BridgeLink::new(2, tx);
        drop(rx);
        assert!(!link.answer(Attach::Failed { code: ErrorCode::User, errno: String::new(), message: String::new() }));
    }
}

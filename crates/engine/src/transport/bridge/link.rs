//! The state a bridged socket's two sides share: inbound bytes JS fed (a bounded queue), the
//! socket's end or error, whether JS's write buffer is full, and JS's answer to BRIDGE_OPEN. The
//! engine's bridge table (`registry.rs`) maps bridge ids to links so calls from JS find them.
use crate::error::ErrorCode;
use crate::inbox::Inbox;
use parking_lot::Mutex;
use std::io;
use std::task::Waker;
use tokio::sync::oneshot;

/// Inbound bytes queued beyond this make `bridge_data` return false: JS pauses the socket until a
/// BRIDGE_DRAIN event.
pub const HIGH_WATER: usize = 256 * 1024;
/// BRIDGE_DRAIN is sent once the queue falls below this, so a paused socket doesn't flap.
pub(super) const LOW_WATER: usize = HIGH_WATER / 4;

/// JS's answer to BRIDGE_OPEN.
pub enum Attach {
    /// The socket is there. `addrs` is "localIp|localPort|remoteIp|remotePort" plus "|tls|<alpn>"
    /// for TLS sockets (the format upgraded sockets report, see `events.rs`).
    Ok {
        addrs: String,
    },
    Failed {
        code: ErrorCode,
        errno: String,
        message: String,
    },
}

#[derive(Default)]
pub(super) struct LinkState {
    /// Inbound bytes not yet read; JS is told to stop feeding past the high-water mark.
    pub(super) inbox: Inbox,
    /// Bytes of the front chunk already read.
    pub(super) offset: usize,
    pub(super) eof: bool,
    pub(super) error: Option<(io::ErrorKind, String)>,
    pub(super) reader: Option<Waker>,
    /// JS's socket buffer is full: writes wait for `set_writable(true)`.
    pub(super) write_blocked: bool,
    pub(super) writer: Option<Waker>,
    pub(super) attach: Option<oneshot::Sender<Attach>>,
}

/// What the engine and the JS thread share about one bridged socket.
pub struct BridgeLink {
    pub id: u32,
    pub(super) state: Mutex<LinkState>,
}

/// The `io::ErrorKind` of a Node error code, so `errno_name` gives the same code back.
pub(super) fn kind_of(errno: &str) -> io::ErrorKind {
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
    pub(super) fn new(id: u32, attach: oneshot::Sender<Attach>) -> BridgeLink {
        BridgeLink {
            id,
            state: Mutex::new(LinkState { attach: Some(attach), ..LinkState::default() }),
        }
    }

    /// Bytes that arrived on the JS socket. False once JS should pause the socket and wait for
    /// BRIDGE_DRAIN.
    pub fn push(&self, chunk: Vec<u8>) -> bool {
        let (below, reader) = {
            let mut st = self.state.lock();
            if st.eof || st.error.is_some() {
                return true; // the read side is over; late bytes are dropped
            }
            let below = st.inbox.push(chunk, HIGH_WATER);
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
        assert!(link.state.lock().inbox.drain_wanted);
        link.end();
        // After the end, bytes are dropped and never block.
        assert!(link.push(vec![0; HIGH_WATER]));
        assert_eq!(link.state.lock().inbox.bytes, HIGH_WATER);
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
        assert!(!link.answer(Attach::Failed {
            code: ErrorCode::User,
            errno: String::new(),
            message: String::new()
        }));
    }
}

//! What a connection runs once connected: the protocol ALPN (or prior knowledge) chose, and how
//! its session ends.
//!
//! A session is an `async fn run(pool, conn_id, io, addrs) -> End` (`http1::run`,
//! `crate::h2::session::run`; HTTP/3's joins them) that owns the connection until it ends. It must:
//! - take its work from the pool through `ConnOwner::take` (never from the pool's state), as
//!   much as its protocol allows at once;
//! - report `connected` once it speaks its protocol (`connect_failed` if that failed), and
//!   `disconnected` when it takes no more work — or `detached` if it hands the socket over;
//! - settle every request it took: an event that ends it (END or ERROR), or `requeue` (which
//!   applies the retry caps and says RETRY) for one that may be sent again — also when its task
//!   is torn down by a panic (a `Drop` that fails what is still aboard);
//! - give way to other connections after `BUDGET` rounds of work per poll.
//!
//! `conn::run` awaits the session and acts on its `End`: only `Upgraded` needs anything more.
use super::buffers::Buffers;
use crate::driver::Timer;
use crate::error::ErrorCode;
use crate::events;
use crate::owner::ConnOwner;
use crate::request::{Breach, ReqCtl};
use crate::transport::Transport;
use std::future::Future;
use std::sync::Arc;
use std::task::Context;

/// Rounds of read/write work per poll before a session yields to other connections.
pub(super) const BUDGET: usize = 16;

/// The protocol a connection speaks; each has its session (`http1.rs`, `crate::h2::session`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    H1,
    H2,
}

impl Protocol {
    /// From a connection's address string (see `connect.rs`): ALPN's choice over TLS (the
    /// engine's, or Node's for a bridged socket), else h2c by prior knowledge, else HTTP/1.1.
    pub(crate) fn negotiated(addrs: &str, prior_knowledge: bool) -> Protocol {
        let h2 = if addrs.contains("|tls|") { addrs.ends_with("|tls|h2") } else { prior_knowledge };
        if h2 {
            Protocol::H2
        } else {
            Protocol::H1
        }
    }
}

/// Why a session ended (it has told the pool and settled its requests by then).
pub(crate) enum End {
    /// Closed on purpose (idle timeout, no reuse, pool closing, the server's GOAWAY): nothing
    /// failed.
    Clean(&'static str),
    /// Failed: what the requests that cannot be sent again fail with.
    Failed { code: ErrorCode, errno: &'static str, message: String },
    /// An in-flight request was aborted from JS; the socket cannot be reused mid-response.
    Aborted,
    /// A 101 or a CONNECT 2xx gave the socket to one request, and the pool let it go: the
    /// connection goes on as that request's session (`tunnel::run`).
    Upgraded(Box<Upgraded>),
}

/// A connection handed over to one request, with what its HTTP/1.1 session left in flight.
pub(crate) struct Upgraded {
    pub io: Transport,
    /// `rbuf`: bytes the server sent right behind the 101 / 2xx head, already read (the first
    /// bytes of the new protocol); `wbuf`: what was still to go out.
    pub bufs: Buffers,
    pub id: u32,
    pub ctl: Arc<ReqCtl>,
}

impl End {
    pub(crate) fn io(e: std::io::Error) -> End {
        End::Failed {
            code: ErrorCode::Socket,
            errno: crate::error::errno_name(&e),
            message: e.to_string(),
        }
    }

    /// A request broke one of its limits (`request::Limits`).
    pub(crate) fn breach(b: Breach) -> End {
        End::Failed { code: b.into(), errno: "", message: b.message().into() }
    }

    /// What the pool hears (`ConnOwner::disconnected`) and requests fail with.
    pub(crate) fn cause(&self) -> (ErrorCode, &'static str, String) {
        match self {
            End::Clean(m) => (ErrorCode::Info, "", m.to_string()),
            End::Failed { code, errno, message } => (*code, *errno, message.clone()),
            End::Aborted => (ErrorCode::Info, "", "request aborted".to_string()),
            End::Upgraded(_) => (ErrorCode::Info, "", "upgraded".to_string()),
        }
    }
}

/// What a session torn down with requests aboard (a panic, the runtime shutting down) fails them
/// with, from its `Drop`.
pub(super) const LOST: &str = "connection task ended unexpectedly";

/// A multiplexed session's idle check (h2, h3): true once it has had no stream open for the
/// pool's `keepAliveTimeout` (undici closes an idle session as it does an idle HTTP/1.1 socket).
/// The timer is dropped while streams run and armed again when the last one ends.
pub(crate) fn idle_expired(
    pool: &dyn ConnOwner,
    busy: bool,
    idle: &mut Option<Timer>,
    cx: &mut Context<'_>,
) -> bool {
    if busy {
        *idle = None;
        return false;
    }
    let keep_alive = pool.opts().keep_alive_timeout;
    idle.get_or_insert_with(|| Timer::after(keep_alive)).as_mut().poll(cx).is_ready()
}

/// A multiplexed stream torn down with its session (destroy, a panic) while JS still waits for
/// its events: it is forgotten and fails with `failure` (unless aborted, or the pool was
/// destroyed, which said so already), rather than leave JS waiting.
pub(crate) fn fail_torn_down(
    pool: &dyn ConnOwner,
    ctl: &ReqCtl,
    id: u32,
    failure: (ErrorCode, String),
    socket: &str,
) {
    pool.shared().forget(id);
    if !ctl.aborted() && !pool.destroyed() {
        let (code, msg) = failure;
        pool.shared().emit(|w| w.socket_error(events::ERROR, id, code, "", socket, &msg));
    }
}

/// Fails `ids` as lost (unless the pool was destroyed, which said so already) and forgets them.
pub(super) fn fail_lost(pool: &dyn ConnOwner, ids: &[u32]) {
    if ids.is_empty() {
        return;
    }
    let shared = pool.shared();
    if !pool.destroyed() {
        shared.emit(|w| {
            for id in ids {
                w.error(events::ERROR, *id, ErrorCode::Internal, "", LOST);
            }
        });
    }
    for id in ids {
        shared.forget(*id);
    }
}

/// Why a connection attempt nobody waits for was given up (undici's words).
pub(crate) const GAVE_UP: &str = "no request waits for this connection";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpn_or_prior_knowledge_picks_the_protocol() {
        assert_eq!(Protocol::negotiated("1|2|3|4|tls|h2", false), Protocol::H2);
        assert_eq!(
            Protocol::negotiated("1|2|3|4|tls|http/1.1", true),
            Protocol::H1,
            "TLS: ALPN decides"
        );
        assert_eq!(Protocol::negotiated("1|2|3|4|tls|", true), Protocol::H1);
        assert_eq!(Protocol::negotiated("1|2|3|4", true), Protocol::H2, "h2c by prior knowledge");
        assert_eq!(Protocol::negotiated("|||", false), Protocol::H1);
    }
}

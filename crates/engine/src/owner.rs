//! The narrow interface between a pool and the connections it owns. A connection never sees the
//! pool's state: it asks its owner for the next request it may take and reports how it is doing
//! (connected, detached as a tunnel, disconnected); the pool implements this (`pool.rs`), and
//! tests implement it with a plain queue.
use crate::error::ErrorCode;
use crate::options::PoolOptions;
use crate::registry::Shared;
use crate::request::Request;
use crate::timings::ConnStamps;
use std::sync::Arc;
use std::task::Waker;

/// A connection's side of taking work: which requests it admits, and taking them.
pub(crate) trait Taker {
    /// The connection has room for another request.
    fn wants_more(&self) -> bool;
    /// The connection may take `next` now (the pipelining rules).
    fn admits(&self, next: &Request) -> bool;
    /// `req` is the connection's now (called with the owner's queue locked, in queue order).
    fn submit(&mut self, req: Request);
}

/// Why a connection hands a request back to the queue (`ConnOwner::requeue`): each reason has its
/// own cap on how often one request may come back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// Its connection failed before any byte of its response came (`conn::pipeline::settle`).
    Lost,
    /// The server did not process it (HTTP/2: above a GOAWAY's last stream, REFUSED_STREAM).
    Refused,
}

pub(crate) trait ConnOwner: Send + Sync + 'static {
    /// The pool's id, for events about it.
    fn id(&self) -> u32;
    fn opts(&self) -> &PoolOptions;
    fn shared(&self) -> &Arc<Shared>;
    /// Hands connection `conn` queued requests while it `wants_more` and `admits` the next one;
    /// aborted requests are dropped on the way. When the queue runs dry the connection waits for
    /// work (`waker` is woken when some arrives); when it refuses the next request, another
    /// waiting connection is woken for it. Nothing is handed out once the pool is destroyed.
    fn take(&self, conn: u64, waker: &Waker, taker: &mut dyn Taker);
    /// Puts requests a connection could not finish back at the front of the queue, in order,
    /// counting one more retry for each and telling JS (RETRY) — those `why`'s cap still allows:
    /// the others are returned, for the caller to fail. The caller reports its end (or calls
    /// `kick`) next.
    fn requeue(&self, reqs: Vec<Request>, why: Resend) -> Vec<Request>;
    /// Gets queued work moving (wakes a waiting connection or opens one).
    fn kick(&self);
    /// No more work will come: the pool is destroyed, or closing with nothing queued.
    fn finished(&self) -> bool;
    fn destroyed(&self) -> bool;
    /// A connection attempt starts.
    fn connecting(&self);
    /// `version` is the protocol the connection speaks ("h1" / "h2"), `addrs` its addresses.
    fn connected(&self, conn: u64, version: &str, addrs: &str);
    /// Connection `conn` was made, its phases ending at `stamps`: the first request it takes
    /// reports them (`timings.rs`); the others report none.
    fn stamped(&self, _conn: u64, _stamps: ConnStamps) {}
    /// `socket`: for a refused / unreachable address, the one tried (`events::socket_info`), else
    /// empty.
    fn connect_failed(&self, conn: u64, code: ErrorCode, errno: &str, socket: &str, msg: &str);
    /// The connection became an upgraded tunnel: it leaves the pool.
    fn detached(&self, conn: u64);
    /// A connected connection ended; requests it handed back are already re-queued. `socket`
    /// describes it for JS (`events::socket_info`; may be empty).
    fn disconnected(&self, conn: u64, code: ErrorCode, msg: &str, socket: &str);
}

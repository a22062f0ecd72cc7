//! Per-origin connection sets: one queue of requests shared by up to `connections` connection
//! tasks, which pull work as they have room for it through `ConnOwner` (the pipelining rules are
//! the connection's, in `conn/`).
use crate::cap::CapMember;
use crate::conn;
use crate::error::ErrorCode;
use crate::events::{self, Writer};
use crate::owner::{ConnOwner, Resend, Taker};
use crate::registry::Shared;
use crate::request::{Head, Limits, Request, StreamLength};
use crate::timings::ConnStamps;
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

pub use crate::options::PoolOptions;

/// What `Pool::stats` reports; requests in flight are counted on the JS side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStats {
    pub connected: usize,
    pub free: usize,
    /// Requests not yet taken by a connection.
    pub queued: usize,
}

/// How often one request may go back to the queue (`requeue`) after connections failed under it
/// before any byte of its response came (a reused socket found dead, a pipeline behind a failure).
const MAX_RESENDS_LOST: u8 = 3;
/// How often one request may go back to the queue after servers refused it unprocessed (RFC 9113
/// §8.7: a client SHOULD NOT retry a request more than once; undici's budget).
const MAX_RESENDS_REFUSED: u8 = 1;

impl Resend {
    /// The retry caps: how often one request may come back to the queue for this reason.
    pub(crate) fn cap(self) -> u8 {
        match self {
            Resend::Lost => MAX_RESENDS_LOST,
            Resend::Refused => MAX_RESENDS_REFUSED,
        }
    }
}

#[derive(Debug)]
pub enum DispatchError {
    Destroyed,
}

struct PoolState {
    queue: VecDeque<Request>,
    /// Connection tasks alive, connecting or connected.
    live: usize,
    connected: usize,
    /// Connections with room that wait for work.
    waiting: Vec<(u64, Waker)>,
    tasks: HashMap<u64, AbortHandle>,
    next_conn: u64,
    closing: bool,
    destroyed: bool,
    /// Once a connection of this pool negotiated h2: how many requests one session takes, so a
    /// burst wakes a session instead of opening a connection per request.
    h2_streams: Option<usize>,
    /// A connection of this pool chose HTTP/1.1: connections fan out without probing.
    h1_seen: bool,
    /// The connection whose protocol is not known yet, while no other may open
    /// (`H2Options::probe_protocol`).
    probe: Option<u64>,
    /// Connections still connecting, with what tells each to give up (`cancel_unused`).
    connecting: HashMap<u64, Arc<Notify>>,
    /// Connections asked to end once idle, to give their cap slot to a waiting pool (`cap.rs`).
    shed: usize,
    /// With a cap: connections that took a request, so may yield their slot to another pool.
    served: HashSet<u64>,
    /// Connections made whose first request is still to come: when their phases ended.
    conn_stamps: HashMap<u64, ConnStamps>,
    /// HTTP/3 (`h3::route`): the connections speaking it, and the TCP ones given no more work
    /// since an Alt-Svc endpoint is advertised (they end at their idle timeout, and count no
    /// more against `connections`, so the next request opens a QUIC connection).
    quic: HashSet<u64>,
    retiring: HashSet<u64>,
}

pub struct Pool {
    pub id: u32,
    pub opts: PoolOptions,
    shared: Arc<Shared>,
    state: Mutex<PoolState>,
    /// This pool as its connections see it (a weak self-reference, so the pool is dropped with
    /// its last outside handle, as before).
    me: std::sync::Weak<Pool>,
}

impl Pool {
    pub(crate) fn new(id: u32, opts: PoolOptions, shared: Arc<Shared>) -> Arc<Pool> {
        Arc::new_cyclic(|me: &std::sync::Weak<Pool>| {
            if let Some(cap) = &opts.cap {
                cap.join(me.clone() as std::sync::Weak<dyn CapMember>);
            }
            Pool {
                me: me.clone(),
                id,
                opts,
                shared,
                state: Mutex::new(PoolState {
                    queue: VecDeque::new(),
                    live: 0,
                    connected: 0,
                    waiting: Vec::new(),
                    tasks: HashMap::new(),
                    next_conn: 0,
                    closing: false,
                    destroyed: false,
                    h2_streams: None,
                    h1_seen: false,
                    probe: None,
                    connecting: HashMap::new(),
                    shed: 0,
                    served: HashSet::new(),
                    conn_stamps: HashMap::new(),
                    quic: HashSet::new(),
                    retiring: HashSet::new(),
                }),
            }
        })
    }

    /// Queues a request (called on the JS thread). The caller batches: it queues every request of
    /// a JS tick, then calls `flush` once.
    #[allow(clippy::too_many_arguments)]
    pub fn dispatch(
        self: &Arc<Self>,
        id: u32,
        head: Head,
        body: Option<Vec<u8>>,
        flags: u32,
        stream_length: StreamLength,
        headers_timeout: Option<Duration>,
        body_timeout: Option<Duration>,
    ) -> Result<(), DispatchError> {
        let ctl = self.shared.register(id);
        ctl.timings.queued();
        let req = Request {
            id,
            head,
            body,
            stream_length,
            flags,
            limits: Limits {
                headers_timeout,
                body_timeout,
                max_response_size: self.opts.max_response_size,
            },
            ctl,
            retries: 0,
        };
        let mut st = self.state.lock();
        if st.destroyed {
            drop(st);
            self.shared.forget(id);
            return Err(DispatchError::Destroyed);
        }
        st.queue.push_back(req);
        Ok(())
    }

    /// Gets queued requests moving: wakes as many waiting connections as there are queued
    /// requests, and starts new connections for the rest, up to the limit. Under the inline
    /// driver the caller ticks it next: the wakes wait for that tick (`Shared::wake_for_flush`).
    pub fn flush(self: &Arc<Self>) {
        let mut wakers = self.shared.wake_list();
        let mut st = self.state.lock();
        let mut n = st.queue.len();
        while n > 0 {
            match st.waiting.pop() {
                Some((_, w)) => wakers.push(w),
                None => break,
            }
            // A woken connection takes up to `pipelining` requests (a session, up to its streams).
            n = n.saturating_sub(st.h2_streams.unwrap_or(self.opts.pipelining.max(1)));
        }
        self.fan_out(&mut st, n);
        drop(st);
        self.shared.wake_for_flush(wakers);
        self.make_room();
    }

    /// Refused a cap slot: asks another pool to close an idle connection (nothing without a cap).
    fn make_room(&self) {
        if let Some(cap) = &self.opts.cap {
            cap.make_room(&self.me);
        }
    }

    /// Gives back cap slots of connections that ended (nothing without a cap).
    fn release_slots(&self, n: usize) {
        if let Some(cap) = &self.opts.cap {
            cap.release(&self.me, n);
        }
    }

    /// Opens connections for `n` queued requests, within the limit.
    fn fan_out(self: &Arc<Self>, st: &mut PoolState, mut n: usize) {
        while n > 0 && self.may_spawn(st) {
            self.spawn_conn(st);
            n = n.saturating_sub(st.h2_streams.unwrap_or(1));
        }
    }

    /// Another connection may open: within `connections`, and no connection is still finding out
    /// whether it speaks h2 (then it may take the whole burst itself).
    /// With a cap, a slot is taken for the connection about to open (or the pool waits for one).
    fn may_spawn(&self, st: &PoolState) -> bool {
        !st.destroyed
            && st.probe.is_none()
            && (self.opts.connections == 0
                || st.live.saturating_sub(st.retiring.len()) < self.opts.connections)
            && self.opts.cap.as_ref().is_none_or(|cap| cap.acquire(&self.me))
    }

    fn spawn_conn(self: &Arc<Self>, st: &mut PoolState) {
        st.live += 1;
        let conn_id = st.next_conn;
        st.next_conn += 1;
        if self.opts.h2.probe_protocol && !st.h1_seen {
            st.probe = Some(conn_id);
        }
        // Spawned under the lock so the task cannot finish (and unregister) before it is registered.
        let owner: Arc<dyn ConnOwner> = self.clone();
        let give_up = Arc::new(Notify::new());
        st.connecting.insert(conn_id, give_up.clone());
        let handle = self.shared.spawn(conn::run(owner, conn_id, give_up));
        st.tasks.insert(conn_id, handle.abort_handle());
    }

    /// Gets queued work moving: wakes one waiting connection, else starts a new one if allowed.
    fn kick_locked(self: &Arc<Self>, mut st: parking_lot::MutexGuard<'_, PoolState>) {
        if let Some((_, w)) = st.waiting.pop() {
            drop(st);
            w.wake();
            return;
        }
        if st.queue.is_empty() {
            return;
        }
        if self.may_spawn(&st) {
            self.spawn_conn(&mut st);
        } else if self.opts.cap.is_some() {
            drop(st);
            self.make_room();
        }
    }

    /// Asks one idle connection to end (its cap slot goes to a waiting pool): true if there was
    /// one not already asked.
    fn close_one_idle(&self) -> bool {
        let waker = {
            let mut st = self.state.lock();
            if st.destroyed || !st.queue.is_empty() || st.shed >= st.waiting.len() {
                return false;
            }
            st.shed += 1;
            st.waiting.pop().map(|(_, w)| w)
        };
        if let Some(w) = waker {
            w.wake();
        }
        true
    }

    /// Graceful close: queued requests still run; idle connections end.
    pub fn close(&self) {
        let waiters = {
            let mut st = self.state.lock();
            st.closing = true;
            std::mem::take(&mut st.waiting)
        };
        for (_, w) in waiters {
            w.wake();
        }
    }

    /// No request waits any more (the last one aborted): connection attempts still under way are
    /// given up, as undici cancels them, so the next request opens a connection of its own instead
    /// of waiting for one nobody needs. Nothing happens if a live request is queued meanwhile.
    pub fn cancel_unused(&self) {
        let st = self.state.lock();
        if st.queue.iter().any(|r| !r.ctl.aborted()) {
            return;
        }
        for give_up in st.connecting.values() {
            // A stored permit: a task not yet waiting still sees it.
            give_up.notify_one();
        }
    }

    /// Abrupt: drops queued requests and kills connection tasks (their sockets close). The JS side
    /// has already failed the requests, so no events are sent for them.
    pub fn destroy(&self) {
        let (queue, tasks, live) = {
            let mut st = self.state.lock();
            if st.destroyed {
                return;
            }
            st.destroyed = true;
            st.closing = true;
            st.waiting.clear();
            (std::mem::take(&mut st.queue), std::mem::take(&mut st.tasks), st.live)
        };
        // Aborted tasks do not report back: their slots are given back here, once.
        self.release_slots(live);
        for r in queue {
            self.shared.forget(r.id);
        }
        for (_, t) in tasks {
            t.abort();
        }
    }

    /// Its queued requests wait for a slot of its cap (`cap.rs`).
    pub fn waits_for_cap(&self) -> bool {
        self.opts.cap.as_ref().is_some_and(|cap| cap.waits(&self.me))
    }

    /// A snapshot of the pool for `stats` (read on the JS thread).
    pub fn stats(&self) -> PoolStats {
        let st = self.state.lock();
        if st.destroyed {
            // Its tasks were aborted without reporting back; nothing of it is left.
            return PoolStats { connected: 0, free: 0, queued: 0 };
        }
        PoolStats {
            connected: st.connected,
            // Connections that asked for work: idle, or with room in their pipeline.
            free: st.waiting.len().min(st.connected),
            // Aborted requests stay queued until a connection skips them; they are no longer pending.
            queued: st.queue.iter().filter(|r| !r.ctl.aborted()).count(),
        }
    }

    fn emit(&self, f: impl FnOnce(&mut Writer<'_>)) {
        self.shared.emit(f);
    }

    fn arc(&self) -> Arc<Pool> {
        self.me.upgrade().expect("a pool outlives the calls its connections make")
    }
}

impl CapMember for Pool {
    fn slot_freed(&self) {
        if let Some(me) = self.me.upgrade() {
            me.kick_locked(me.state.lock());
        }
    }

    fn close_idle(&self) -> bool {
        self.close_one_idle()
    }
}

impl ConnOwner for Pool {
    fn id(&self) -> u32 {
        self.id
    }
    fn opts(&self) -> &PoolOptions {
        &self.opts
    }
    fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    fn take(&self, conn: u64, waker: &Waker, taker: &mut dyn Taker) {
        let mut st = self.state.lock();
        if st.destroyed {
            return;
        }
        if !st.quic.contains(&conn)
            && self.opts.h3.as_ref().is_some_and(|h3| h3.route.advertised(Instant::now()))
        {
            // A TCP connection while the origin advertises HTTP/3: what is queued goes to QUIC.
            if st.retiring.insert(conn) && !st.queue.is_empty() && self.may_spawn(&st) {
                self.arc().spawn_conn(&mut st);
            }
            return;
        }
        // Another origin waits for a cap slot: a connection that served here (or has nothing to
        // do) takes no more and ends once idle (`finished`), so slots go round the origins
        // instead of staying with one.
        if let Some(cap) = &self.opts.cap {
            if (st.served.contains(&conn) || st.queue.is_empty()) && cap.others_wait(&self.me) {
                if !st.waiting.iter().any(|(id, _)| *id == conn) {
                    st.shed += 1;
                    st.waiting.push((conn, waker.clone()));
                }
                return;
            }
        }
        let mut took = false;
        while taker.wants_more() {
            let Some(next) = st.queue.front() else {
                if !st.waiting.iter().any(|(id, _)| *id == conn) {
                    st.waiting.push((conn, waker.clone()));
                }
                break;
            };
            if next.ctl.aborted() {
                let r = st.queue.pop_front().expect("front exists");
                self.shared.forget(r.id);
                continue;
            }
            if !taker.admits(next) {
                // Another connection may be free to take it.
                if let Some(pos) = st.waiting.iter().position(|(id, _)| *id != conn) {
                    let (_, w) = st.waiting.swap_remove(pos);
                    w.wake();
                }
                break;
            }
            let req = st.queue.pop_front().expect("front exists");
            took = true;
            // Only a connection's first request reports its phases (also unsetting an earlier
            // attempt's, when the request was re-sent).
            let conn_stamps = match st.conn_stamps.is_empty() {
                true => ConnStamps::default(),
                false => st.conn_stamps.remove(&conn).unwrap_or_default(),
            };
            req.ctl.timings.started(conn_stamps);
            taker.submit(req);
        }
        if took {
            if self.opts.cap.is_some() {
                st.served.insert(conn);
            }
            st.waiting.retain(|(id, _)| *id != conn);
            // Full before the queue ran out: a flush wakes one connection per `pipelining`
            // requests, counting on room this one did not have. Pass the wake on, or the rest
            // would wait for this connection's next response while another sits idle.
            if !st.queue.is_empty() {
                if let Some((_, w)) = st.waiting.pop() {
                    w.wake();
                }
            }
        }
    }

    fn requeue(&self, reqs: Vec<Request>, why: Resend) -> Vec<Request> {
        let (again, over): (Vec<Request>, Vec<Request>) =
            reqs.into_iter().partition(|r| r.retries < why.cap());
        if !again.is_empty() {
            // Before they are queued: another connection may take them at once.
            self.shared.emit(|w| {
                for r in &again {
                    w.empty(events::RETRY, r.id);
                }
            });
            let mut st = self.state.lock();
            for mut r in again.into_iter().rev() {
                r.retries += 1;
                st.queue.push_front(r);
            }
        }
        over
    }

    fn kick(&self) {
        self.arc().kick_locked(self.state.lock());
    }

    /// Also true, once, for an idle connection asked to give its cap slot up (`close_idle`,
    /// `take`) while another pool still waits for one.
    fn finished(&self) -> bool {
        let mut st = self.state.lock();
        if st.shed > 0 {
            if self.opts.cap.as_ref().is_some_and(|cap| cap.others_wait(&self.me)) {
                st.shed -= 1;
                return true;
            }
            st.shed = 0;
        }
        st.destroyed || (st.closing && st.queue.is_empty())
    }

    fn destroyed(&self) -> bool {
        self.state.lock().destroyed
    }

    fn stamped(&self, conn: u64, stamps: ConnStamps) {
        self.state.lock().conn_stamps.insert(conn, stamps);
    }

    /// One small event per connection, not per request.
    fn connecting(&self) {
        self.emit(|w| w.empty(events::CONNECTING, self.id));
    }

    fn connected(&self, conn: u64, version: &str, addrs: &str) {
        {
            let mut st = self.state.lock();
            st.connected += 1;
            st.connecting.remove(&conn);
            let probe = st.probe == Some(conn);
            if probe {
                st.probe = None;
            }
            if version == "h3" {
                st.quic.insert(conn);
            }
            if version == "h2" || version == "h3" {
                let streams = match (version, &self.opts.h3) {
                    ("h3", Some(h3)) => h3.max_concurrent_streams,
                    _ => self.opts.h2.max_concurrent_streams,
                };
                st.h2_streams = Some(match streams {
                    0 => 100,
                    n => n as usize,
                });
                // The session takes the queue itself, and asks for another connection when full.
            } else {
                st.h1_seen = true;
                if probe {
                    // HTTP/1.1: the burst held back fans out (this connection takes one request).
                    let n = st.queue.len().saturating_sub(1);
                    self.arc().fan_out(&mut st, n);
                }
            }
        }
        self.emit(|w| w.bytes(events::CONNECTED, self.id, format!("{version}|{addrs}").as_bytes()));
    }

    /// With no connection up, the origin is unreachable for now: fail everything queued (undici
    /// fails a client's queue the same way).
    fn connect_failed(&self, conn: u64, code: ErrorCode, errno: &str, socket: &str, msg: &str) {
        let failed: Vec<Request> = {
            let mut st = self.state.lock();
            st.live -= 1;
            st.tasks.remove(&conn);
            st.connecting.remove(&conn);
            st.conn_stamps.remove(&conn);
            if st.probe == Some(conn) {
                st.probe = None;
            }
            let slot = usize::from(!st.destroyed);
            if code == ErrorCode::Info {
                // Given up (no request waited for it, as undici cancels a connect): nothing
                // failed. Aborted requests go; work queued since gets a new connection.
                let (live, gone): (VecDeque<Request>, VecDeque<Request>) =
                    st.queue.drain(..).partition(|r| !r.ctl.aborted());
                st.queue = live;
                for r in gone {
                    self.shared.forget(r.id);
                }
                drop(st);
                // Given back first: pools already waiting go before this one.
                self.release_slots(slot);
                self.arc().slot_freed();
                return;
            }
            let failed = if st.connected == 0 { st.queue.drain(..).collect() } else { Vec::new() };
            drop(st);
            self.release_slots(slot);
            failed
        };
        for r in &failed {
            self.shared.forget(r.id);
        }
        self.emit(|w| {
            w.socket_error(events::CONNECT_FAILED, self.id, code, errno, socket, msg);
            for r in &failed {
                if !r.ctl.aborted() {
                    w.socket_error(events::ERROR, r.id, code, errno, socket, msg);
                }
            }
        });
    }

    /// Its slot is free again.
    fn detached(&self, conn: u64) {
        self.disconnected(conn, ErrorCode::Info, "upgrade", "");
    }

    fn disconnected(&self, conn: u64, code: ErrorCode, msg: &str, socket: &str) {
        let st = {
            let mut st = self.state.lock();
            st.live -= 1;
            st.connected -= 1;
            st.tasks.remove(&conn);
            st.waiting.retain(|(id, _)| *id != conn);
            st.served.remove(&conn);
            st.conn_stamps.remove(&conn);
            st.quic.remove(&conn);
            st.retiring.remove(&conn);
            if st.probe == Some(conn) {
                st.probe = None;
            }
            st
        };
        let slot = usize::from(!st.destroyed);
        drop(st);
        // Given back first: pools already waiting go before this one.
        self.release_slots(slot);
        // Work may remain (re-queued requests, or requests that arrived while every connection was busy).
        self.arc().slot_freed();
        if !self.state.lock().destroyed {
            self.emit(|w| w.socket_error(events::DISCONNECTED, self.id, code, "", socket, msg));
        }
    }
}

#[cfg(test)]
impl Pool {
    /// A pool of one connection (to a port nothing listens on) whose events go to `sink`, with
    /// that connection counted as started: tests play the connection, or run one by hand.
    pub(crate) fn for_test(sink: Arc<dyn crate::registry::EventSink>) -> Arc<Pool> {
        let shared = Shared::new(tokio::runtime::Handle::current(), sink, None);
        let opts =
            PoolOptions::basic(crate::transport::Target::Tcp { host: "127.0.0.1".into(), port: 9 });
        let pool = Pool::new(1, opts, shared);
        pool.state.lock().live = 1;
        pool
    }
}

#[cfg(test)]
#[path = "pool_tests.rs"]
mod tests;

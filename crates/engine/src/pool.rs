//! Per-origin connection sets: one queue of requests shared by up to `connections` connection
//! tasks, which pull work as they have room for it through `ConnOwner` (the pipelining rules are
//! the connection's, in `conn/`).
use crate::conn;
use crate::error::ErrorCode;
use crate::events::{self, Writer};
use crate::owner::{ConnOwner, Taker};
use crate::registry::Shared;
use crate::request::{Request, StreamLength};
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;
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
        Arc::new_cyclic(|me| Pool {
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
            }),
        })
    }

    /// Queues a request (called on the JS thread). With `wake`, also gets it moving at once;
    /// without, the caller batches: it queues every request of a JS tick, then calls `flush` once.
    #[allow(clippy::too_many_arguments)]
    pub fn dispatch(
        self: &Arc<Self>,
        id: u32,
        head: String,
        body: Option<Vec<u8>>,
        flags: u32,
        stream_length: StreamLength,
        headers_timeout: Option<Duration>,
        body_timeout: Option<Duration>,
        wake: bool,
    ) -> Result<(), DispatchError> {
        let ctl = self.shared.register(id);
        let req = Request { id, head, body, stream_length, flags, headers_timeout, body_timeout, ctl, retries: 0 };
        let mut st = self.state.lock();
        if st.destroyed {
            drop(st);
            self.shared.forget(id);
            return Err(DispatchError::Destroyed);
        }
        st.queue.push_back(req);
        if wake {
            self.kick_locked(st);
        }
        Ok(())
    }

    /// Gets queued requests moving: wakes as many waiting connections as there are queued
    /// requests, and starts new connections for the rest, up to the limit.
    pub fn flush(self: &Arc<Self>) {
        let mut st = self.state.lock();
        let mut wakers = Vec::new();
        let mut n = st.queue.len();
        while n > 0 {
            match st.waiting.pop() {
                Some((_, w)) => wakers.push(w),
                None => break,
            }
            // A woken connection takes up to `pipelining` requests (a session, up to its streams).
            n = n.saturating_sub(st.h2_streams.unwrap_or(self.opts.pipelining.max(1)));
        }
        while n > 0 && !st.destroyed && (self.opts.connections == 0 || st.live < self.opts.connections) {
            self.spawn_conn(&mut st);
            n = n.saturating_sub(st.h2_streams.unwrap_or(1));
        }
        drop(st);
        for w in wakers {
            w.wake();
        }
    }

    fn spawn_conn(self: &Arc<Self>, st: &mut PoolState) {
        st.live += 1;
        let conn_id = st.next_conn;
        st.next_conn += 1;
        // Spawned under the lock so the task cannot finish (and unregister) before it is registered.
        let owner: Arc<dyn ConnOwner> = self.clone();
        let handle = self.shared.handle.spawn(conn::run(owner, conn_id));
        st.tasks.insert(conn_id, handle.abort_handle());
    }

    /// Gets queued work moving: wakes one waiting connection, else starts a new one if allowed.
    fn kick_locked(self: &Arc<Self>, mut st: parking_lot::MutexGuard<'_, PoolState>) {
        if let Some((_, w)) = st.waiting.pop() {
            drop(st);
            w.wake();
            return;
        }
        if st.destroyed || st.queue.is_empty() {
            return;
        }
        if self.opts.connections == 0 || st.live < self.opts.connections {
            self.spawn_conn(&mut st);
        }
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

    /// Abrupt: drops queued requests and kills connection tasks (their sockets close). The JS side
    /// has already failed the requests, so no events are sent for them.
    pub fn destroy(&self) {
        let (queue, tasks) = {
            let mut st = self.state.lock();
            st.destroyed = true;
            st.closing = true;
            st.waiting.clear();
            (std::mem::take(&mut st.queue), std::mem::take(&mut st.tasks))
        };
        for r in queue {
            self.shared.forget(r.id);
        }
        for (_, t) in tasks {
            t.abort();
        }
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
            taker.submit(req);
        }
        if took {
            st.waiting.retain(|(id, _)| *id != conn);
        }
    }

    fn requeue(&self, reqs: Vec<Request>) {
        let mut st = self.state.lock();
        for mut r in reqs.into_iter().rev() {
            r.retries += 1;
            st.queue.push_front(r);
        }
    }

    fn kick(&self) {
        self.arc().kick_locked(self.state.lock());
    }

    fn finished(&self) -> bool {
        let st = self.state.lock();
        st.destroyed || (st.closing && st.queue.is_empty())
    }

    fn destroyed(&self) -> bool {
        self.state.lock().destroyed
    }

    /// One small event per connection, not per request.
    fn connecting(&self) {
        self.emit(|w| w.empty(events::CONNECTING, self.id));
    }

    fn connected(&self, _conn: u64, version: &str, addrs: &str) {
        {
            let mut st = self.state.lock();
            st.connected += 1;
            if version == "h2" {
                st.h2_streams = Some(match self.opts.h2.max_concurrent_streams {
                    0 => 100,
                    n => n as usize,
                });
            }
        }
        self.emit(|w| w.bytes(events::CONNECTED, self.id, format!("{version}|{addrs}").as_bytes()));
    }

    /// With no connection up, the origin is unreachable for now: fail everything queued (undici
    /// fails a client's queue the same way).
    fn connect_failed(&self, conn: u64, code: ErrorCode, errno: &str, msg: &str) {
        let failed: Vec<Request> = {
            let mut st = self.state.lock();
            st.live -= 1;
            st.tasks.remove(&conn);
            if st.connected == 0 {
                st.queue.drain(..).collect()
            } else {
                Vec::new()
            }
        };
        for r in &failed {
            self.shared.forget(r.id);
        }
        self.emit(|w| {
            w.error(events::CONNECT_FAILED, self.id, code, errno, msg);
            for r in &failed {
                if !r.ctl.aborted() {
                    w.error(events::ERROR, r.id, code, errno, msg);
                }
            }
        });
    }

    /// Its slot is free again.
    fn detached(&self, conn: u64) {
        self.disconnected(conn, ErrorCode::Info, "upgrade");
    }

    fn disconnected(&self, conn: u64, code: ErrorCode, msg: &str) {
        let st = {
            let mut st = self.state.lock();
            st.live -= 1;
            st.connected -= 1;
            st.tasks.remove(&conn);
            st.waiting.retain(|(id, _)| *id != conn);
            st
        };
        // Work may remain (re-queued requests, or requests that arrived while every connection was busy).
        self.arc().kick_locked(st);
        if !self.state.lock().destroyed {
            self.emit(|w| w.error(events::DISCONNECTED, self.id, code, "", msg));
        }
    }
}

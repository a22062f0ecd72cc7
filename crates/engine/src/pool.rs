//! Per-origin connection sets: one queue of requests shared by up to `connections` connection
//! tasks, which pull work as they have room for it (pipelining rules live in `conn.rs`).
use crate::conn;
use crate::engine::Shared;
use crate::error::ErrorCode;
use crate::events::{self, Writer};
use crate::request::{Request, StreamLength};
use crate::transport::Target;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;
use tokio::task::AbortHandle;

#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub target: Target,
    /// TLS on top of `target` (https origins); built by `Engine::tls_connector`.
    pub tls: Option<crate::transport::TlsConnector>,
    /// Maximum connections; 0 means no limit.
    pub connections: usize,
    /// Maximum requests in flight on one connection (0 is treated as 1).
    pub pipelining: usize,
    pub connect_timeout: Option<Duration>,
    pub keep_alive_timeout: Duration,
    pub keep_alive_max_timeout: Duration,
    pub keep_alive_timeout_threshold: Duration,
    pub max_header_size: usize,
    /// Maximum response body size in bytes; None for no limit.
    pub max_response_size: Option<u64>,
    /// Close a connection after this many requests; 0 for no limit.
    pub max_requests_per_connection: u64,
    /// Connections are sockets JS makes (a custom `connect` function) instead of dialing
    /// `target`: see `transport::bridge`.
    pub bridged: bool,
    /// TCP keep-alive probes after this much idle time (zero: the system's default time); None
    /// sends none.
    pub tcp_keep_alive: Option<Duration>,
    /// Settings for sessions where ALPN chose h2.
    pub h2: crate::h2::H2Options,
}

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

pub(crate) struct PoolState {
    pub queue: VecDeque<Request>,
    /// Connection tasks alive, connecting or connected.
    pub live: usize,
    pub connected: usize,
    /// Connections with room that wait for work.
    pub waiting: Vec<(u64, Waker)>,
    tasks: HashMap<u64, AbortHandle>,
    next_conn: u64,
    pub closing: bool,
    pub destroyed: bool,
    /// Once a connection of this pool negotiated h2: how many requests one session takes, so a
    /// burst wakes a session instead of opening a connection per request.
    pub h2_streams: Option<usize>,
}

pub struct Pool {
    pub id: u32,
    pub opts: PoolOptions,
    pub(crate) shared: Arc<Shared>,
    pub(crate) state: Mutex<PoolState>,
}

impl Pool {
    pub(crate) fn new(id: u32, opts: PoolOptions, shared: Arc<Shared>) -> Arc<Pool> {
        Arc::new(Pool {
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
            self.kick(st);
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
        let handle = self.shared.spawn(conn::run(self.clone(), conn_id));
        st.tasks.insert(conn_id, handle.abort_handle());
    }

    /// Gets queued work moving: wakes one waiting connection, else starts a new one if allowed.
    pub(crate) fn kick(self: &Arc<Self>, mut st: parking_lot::MutexGuard<'_, PoolState>) {
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

    pub(crate) fn emit(&self, f: impl FnOnce(&mut Writer<'_>)) {
        let mut f = Some(f);
        self.shared.write_events(&mut |q| {
            if let Some(f) = f.take() {
                f(&mut Writer::new(q));
            }
        });
    }

    /// A connection attempt starts (one small event per connection, not per request).
    pub(crate) fn on_connecting(&self) {
        self.emit(|w| w.empty(events::CONNECTING, self.id));
    }

    /// `version` is the HTTP version the connection speaks ("h1" / "h2"), `addrs` its addresses.
    pub(crate) fn on_connected(&self, version: &str, addrs: &str) {
        self.state.lock().connected += 1;
        self.emit(|w| w.bytes(events::CONNECTED, self.id, format!("{version}|{addrs}").as_bytes()));
    }

    /// A connection attempt failed. With no connection up, the origin is unreachable for now:
    /// fail everything queued (undici fails a client's queue the same way).
    pub(crate) fn on_connect_failed(self: &Arc<Self>, conn_id: u64, code: ErrorCode, errno: &str, msg: &str) {
        let failed: Vec<Request> = {
            let mut st = self.state.lock();
            st.live -= 1;
            st.tasks.remove(&conn_id);
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

    /// A connection became an upgraded tunnel: it leaves the pool (its slot is free again).
    pub(crate) fn on_detached(self: &Arc<Self>, conn_id: u64) {
        self.on_disconnected(conn_id, ErrorCode::Info, "upgrade");
    }

    /// A connected connection ended (or left as a tunnel); requests it handed back are already
    /// re-queued.
    pub(crate) fn on_disconnected(self: &Arc<Self>, conn_id: u64, code: ErrorCode, msg: &str) {
        let st = {
            let mut st = self.state.lock();
            st.live -= 1;
            st.connected -= 1;
            st.tasks.remove(&conn_id);
            st.waiting.retain(|(id, _)| *id != conn_id);
            st
        };
        // Work may remain (re-queued requests, or requests that arrived while every connection was busy).
        self.kick(st);
        if !self.state.lock().destroyed {
            self.emit(|w| w.error(events::DISCONNECTED, self.id, code, "", msg));
        }
    }
}

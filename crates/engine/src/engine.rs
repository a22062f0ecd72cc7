//! The engine: its own tokio runtime on its own thread(s), the table of live requests (for
//! pause / resume / abort from JS) and the sink events go to.
use crate::driver::task::Tracked;
use crate::driver::{DriverCtx, Inline};
use crate::pool::{Pool, PoolOptions};
use crate::error::ErrorCode;
use crate::request::ReqCtl;
use crate::transport::bridge::{Attach, BridgeLink};
use crate::transport::tls::{ConfigCache, TlsConfigError, TlsConnector, TlsOptions};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::runtime::{Builder, Handle};
use tokio::sync::Notify;

/// Where packed events go (see `events.rs`). The binding implements it with a queue that wakes
/// the JS thread when it goes from empty to non-empty.
pub trait EventSink: Send + Sync + 'static {
    /// Runs `write` with the queue locked so a whole batch lands at once. Returns true when the
    /// queue went from empty to non-empty, i.e. JS needs a `signal`.
    fn write(&self, write: &mut dyn FnMut(&mut Vec<u8>)) -> bool;
    /// Wakes the JS thread to take the queue.
    fn signal(&self);
    /// True while JS is further behind than the queue's high-water mark: connections then stop
    /// reading (so the engine never buffers unbounded data for JS) and `waker` is woken once JS
    /// has taken the queue.
    fn congested(&self, waker: &std::task::Waker) -> bool;
}

pub struct Shared {
    pub handle: Handle,
    pub sink: Arc<dyn EventSink>,
    reqs: Mutex<HashMap<u32, Arc<ReqCtl>>>,
    /// Wakes the flusher task, which signals JS once every connection woken in the same reactor
    /// tick has written its events: one JS wake carries the whole tick instead of one connection.
    flush: Arc<Notify>,
    /// Bridged sockets by bridge id (unique per engine), for the calls JS makes about them.
    bridges: Mutex<HashMap<u32, Arc<BridgeLink>>>,
    next_bridge: Mutex<u32>,
    /// Connection tasks alive (connecting, connected or tunnelling), for leak checks.
    pub(crate) conns: AtomicUsize,
    /// Set when the JS thread drives the runtime (`Engine::new_inline`).
    driver: Option<Arc<DriverCtx>>,
}

/// What the engine holds right now (see `Engine::counts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineCounts {
    /// Requests JS can still pause / resume / abort: queued, in flight or tunnelling.
    pub requests: usize,
    /// Connection tasks alive.
    pub connections: usize,
}

impl Shared {
    /// Spawns an engine task (tracked for the inline driver, see `driver::task`).
    pub(crate) fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.driver {
            Some(ctx) => self.handle.spawn(Tracked::new(Some(ctx), fut)),
            None => self.handle.spawn(fut),
        }
    }

    /// Appends events for JS; the signal to JS is deferred to the flusher.
    pub(crate) fn write_events(&self, write: &mut dyn FnMut(&mut Vec<u8>)) {
        if self.sink.write(write) {
            self.flush.notify_one();
        }
    }

    pub(crate) fn register(&self, id: u32) -> Arc<ReqCtl> {
        let ctl = Arc::new(ReqCtl::default());
        self.reqs.lock().insert(id, ctl.clone());
        ctl
    }
    pub(crate) fn forget(&self, id: u32) {
        self.reqs.lock().remove(&id);
    }
    fn ctl(&self, id: u32) -> Option<Arc<ReqCtl>> {
        self.reqs.lock().get(&id).cloned()
    }

    /// Registers a new bridge under a fresh id (never 0, never one still in use).
    pub(crate) fn register_bridge(&self, make: impl FnOnce(u32) -> BridgeLink) -> Arc<BridgeLink> {
        let mut table = self.bridges.lock();
        let mut next = self.next_bridge.lock();
        let mut id = *next;
        while id == 0 || table.contains_key(&id) {
            id = id.wrapping_add(1);
        }
        *next = id.wrapping_add(1);
        let link = Arc::new(make(id));
        table.insert(id, link.clone());
        link
    }
    pub(crate) fn forget_bridge(&self, id: u32) {
        self.bridges.lock().remove(&id);
    }
    fn bridge(&self, id: u32) -> Option<Arc<BridgeLink>> {
        self.bridges.lock().get(&id).cloned()
    }
}

pub struct Engine {
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    // Kept so a multi-worker runtime lives as long as the engine.
    runtime: Option<tokio::runtime::Runtime>,
    /// One TLS config per distinct option set, so sessions resume across pools.
    tls_configs: Mutex<ConfigCache>,
    /// The runtime the JS thread ticks (`new_inline`).
    inline: Option<Inline>,
}

impl Engine {
    /// `workers == 1` runs a current-thread runtime on one dedicated thread (the default: fewest
    /// cross-thread hand-offs); more uses tokio's multi-thread scheduler.
    pub fn new(workers: usize, sink: Arc<dyn EventSink>) -> std::io::Result<Engine> {
        if workers <= 1 {
            let rt = Builder::new_current_thread().enable_all().build()?;
            let handle = rt.handle().clone();
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            std::thread::Builder::new().name("ferro-engine".into()).spawn(move || {
                rt.block_on(async {
                    let _ = rx.await;
                });
                // Connection tasks still alive are dropped here, closing their sockets.
                rt.shutdown_background();
            })?;
            Ok(Engine {
                shared: Self::shared(handle, sink, None),
                stop: Some(tx),
                runtime: None,
                tls_configs: Default::default(),
                inline: None,
            })
        } else {
            let rt = Builder::new_multi_thread()
                .worker_threads(workers)
                .thread_name("ferro-engine")
                .enable_all()
                .build()?;
            let handle = rt.handle().clone();
            Ok(Engine {
                shared: Self::shared(handle, sink, None),
                stop: None,
                runtime: Some(rt),
                tls_configs: Default::default(),
                inline: None,
            })
        }
    }

    /// An engine whose current-thread runtime is driven by the caller's thread through
    /// [`Engine::inline`] (`Inline::tick`) instead of a thread of its own. Its sink is never
    /// signalled: the driver takes the queue after each tick.
    pub fn new_inline(sink: Arc<dyn EventSink>) -> std::io::Result<Engine> {
        let inline = Inline::new()?;
        Ok(Engine {
            shared: Self::shared(inline.handle(), sink, Some(inline.ctx().clone())),
            stop: None,
            runtime: None,
            tls_configs: Default::default(),
            inline: Some(inline),
        })
    }

    /// The inline driver's runtime (engines made by `new_inline`).
    pub fn inline(&self) -> Option<&Inline> {
        self.inline.as_ref()
    }

    fn shared(handle: Handle, sink: Arc<dyn EventSink>, driver: Option<Arc<DriverCtx>>) -> Arc<Shared> {
        let flush = Arc::new(Notify::new());
        if driver.is_none() {
            let (f, k) = (flush.clone(), sink.clone());
            handle.spawn(async move {
                loop {
                    f.notified().await;
                    k.signal();
                }
            });
        }
        Arc::new(Shared {
            handle,
            sink,
            reqs: Mutex::new(HashMap::new()),
            flush,
            bridges: Mutex::new(HashMap::new()),
            next_bridge: Mutex::new(1),
            conns: AtomicUsize::new(0),
            driver,
        })
    }

    pub fn create_pool(&self, id: u32, opts: PoolOptions) -> Arc<Pool> {
        Pool::new(id, opts, self.shared.clone())
    }

    /// The TLS side of a pool (`PoolOptions::tls`): the config shared by every pool with equal
    /// options, and the name verified (and sent as SNI) for this one.
    pub fn tls_connector(&self, opts: &TlsOptions, server_name: &str) -> Result<TlsConnector, TlsConfigError> {
        let config = self.tls_configs.lock().get(opts)?;
        TlsConnector::new(config, server_name)
    }

    /// Live requests and connections, for leak checks (soak script, tests).
    pub fn counts(&self) -> EngineCounts {
        EngineCounts {
            requests: self.shared.reqs.lock().len(),
            connections: self.shared.conns.load(Ordering::Acquire),
        }
    }

    pub fn pause(&self, id: u32) {
        if let Some(c) = self.shared.ctl(id) {
            c.pause();
        }
    }
    pub fn resume(&self, id: u32) {
        if let Some(c) = self.shared.ctl(id) {
            c.resume();
        }
    }
    /// Queues bytes for a request's streamed body or upgraded connection. False when JS should
    /// wait for a BODY_DRAIN event before writing more (also false for an unknown request).
    pub fn write(&self, id: u32, chunk: Vec<u8>) -> bool {
        match self.shared.ctl(id) {
            Some(c) => c.push_body(chunk),
            None => false,
        }
    }
    /// Ends a request's streamed body, or half-closes its upgraded connection.
    pub fn end(&self, id: u32) {
        if let Some(c) = self.shared.ctl(id) {
            c.end_body();
        }
    }
    pub fn abort(&self, id: u32) {
        if let Some(c) = self.shared.ctl(id) {
            c.abort();
        }
    }

    /// JS's socket for BRIDGE_OPEN `id` is connected. False: nobody waits for it any more
    /// (timed out, pool gone); JS destroys it.
    pub fn bridge_attach(&self, id: u32, addrs: String) -> bool {
        self.shared.bridge(id).is_some_and(|b| b.answer(Attach::Ok { addrs }))
    }
    /// The user's `connect` failed for BRIDGE_OPEN `id`: the pool handles it as a failed connect.
    pub fn bridge_fail(&self, id: u32, code: ErrorCode, errno: String, message: String) -> bool {
        self.shared.bridge(id).is_some_and(|b| b.answer(Attach::Failed { code, errno, message }))
    }
    /// Bytes from a bridged socket. False: pause the socket until BRIDGE_DRAIN.
    pub fn bridge_data(&self, id: u32, chunk: Vec<u8>) -> bool {
        self.shared.bridge(id).is_none_or(|b| b.push(chunk))
    }
    /// A bridged socket ended or closed.
    pub fn bridge_end(&self, id: u32) {
        if let Some(b) = self.shared.bridge(id) {
            b.end();
        }
    }
    /// A bridged socket failed; `errno` is Node's `err.code` (may be empty).
    pub fn bridge_error(&self, id: u32, errno: &str, message: &str) {
        if let Some(b) = self.shared.bridge(id) {
            b.fail(errno, message);
        }
    }
    /// A bridged socket's write buffer is full (false) or drained (true).
    pub fn bridge_writable(&self, id: u32, writable: bool) {
        if let Some(b) = self.shared.bridge(id) {
            b.set_writable(writable);
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

//! What every part of the engine shares: the sink events go to, the table of live requests (for
//! pause / resume / abort from JS), the table of bridged sockets and the count of connection
//! tasks. It depends on nothing above it, so pools, connections and transports can all use it.
use crate::driver::task;
use crate::driver::DriverCtx;
use crate::events::{Batch, Writer};
use crate::request::ReqCtl;
use crate::transport::bridge::link::BridgeLink;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Waker;
use tokio::runtime::Handle;
use tokio::sync::Notify;

/// Where packed events go (see `events.rs`). The binding implements it with a queue that wakes
/// the JS thread when it goes from empty to non-empty.
pub trait EventSink: Send + Sync + 'static {
    /// Runs `write` with the queue locked so a whole batch lands at once. Returns true when the
    /// queue went from empty to non-empty, i.e. JS needs a `signal`.
    fn write(&self, write: &mut dyn FnMut(&mut Batch)) -> bool;
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
    conns: AtomicUsize,
    /// Set when the JS thread drives the runtime (`Engine::new_inline`).
    driver: Option<Arc<DriverCtx>>,
}

impl Shared {
    /// The registries of an engine whose tasks run on `handle`; starts the flusher task there.
    /// With a `driver` (inline), there is no flusher: the driver takes the queue after each tick.
    pub(crate) fn new(
        handle: Handle,
        sink: Arc<dyn EventSink>,
        driver: Option<Arc<DriverCtx>>,
    ) -> Arc<Shared> {
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

    /// Spawns an engine task (tracked for the inline driver, see `driver::task`).
    pub(crate) fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: std::future::Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.driver {
            Some(ctx) => task::spawn(ctx, &self.handle, fut),
            None => self.handle.spawn(fut),
        }
    }

    /// Wakes connections for requests JS just queued (`Pool::flush`). Under the inline driver,
    /// outside a tick, the wakes wait for the tick JS runs right after its flush: a task woken
    /// there, inside the runtime, is queued locally, where a wake from outside also writes the
    /// runtime's eventfd and hands its next reactor poll one more event (two syscalls a flush).
    /// `wakers` comes from `wake_list`; a deferred one goes back to the driver once emptied.
    pub(crate) fn wake_for_flush(&self, wakers: Vec<Waker>) {
        match &self.driver {
            Some(ctx) => ctx.wake_for_flush(wakers),
            None => {
                for w in wakers {
                    w.wake();
                }
            }
        }
    }

    /// An empty vector for `wake_for_flush`'s wakes (one the inline driver recycles, if any).
    pub(crate) fn wake_list(&self) -> Vec<Waker> {
        self.driver.as_ref().map_or_else(Vec::new, |ctx| ctx.wake_list())
    }

    /// Appends events for JS; the signal to JS is deferred to the flusher.
    pub(crate) fn write_events(&self, write: &mut dyn FnMut(&mut Batch)) {
        if self.sink.write(write) {
            self.flush.notify_one();
        }
    }

    /// Appends the events `f` writes, as one batch.
    pub(crate) fn emit(&self, f: impl FnOnce(&mut Writer<'_>)) {
        let mut f = Some(f);
        self.write_events(&mut |q| {
            if let Some(f) = f.take() {
                f(&mut Writer::new(q));
            }
        });
    }

    pub(crate) fn register(&self, id: u32) -> Arc<ReqCtl> {
        let ctl = Arc::new(ReqCtl::default());
        self.reqs.lock().insert(id, ctl.clone());
        ctl
    }
    pub(crate) fn forget(&self, id: u32) {
        self.reqs.lock().remove(&id);
    }
    pub(crate) fn ctl(&self, id: u32) -> Option<Arc<ReqCtl>> {
        self.reqs.lock().get(&id).cloned()
    }
    /// Requests JS can still pause / resume / abort.
    pub(crate) fn requests(&self) -> usize {
        self.reqs.lock().len()
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
    pub(crate) fn bridge(&self, id: u32) -> Option<Arc<BridgeLink>> {
        self.bridges.lock().get(&id).cloned()
    }

    /// Counts a connection task as alive for as long as the guard exists (also when the task
    /// ends by a panic or an abort).
    pub(crate) fn conn_alive(self: &Arc<Self>) -> ConnAlive {
        self.conns.fetch_add(1, Ordering::AcqRel);
        ConnAlive(self.clone())
    }
    /// Connection tasks alive.
    pub(crate) fn connections(&self) -> usize {
        self.conns.load(Ordering::Acquire)
    }
}

/// See `Shared::conn_alive`.
pub(crate) struct ConnAlive(Arc<Shared>);
impl Drop for ConnAlive {
    fn drop(&mut self) {
        self.0.conns.fetch_sub(1, Ordering::AcqRel);
    }
}

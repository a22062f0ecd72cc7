//! The engine: its own tokio runtime on its own thread(s), and the calls JS makes through the
//! binding (pools, pause / resume / abort, bridged sockets), answered from the registries in
//! `registry.rs`.
use crate::driver::{DriverCtx, Inline};
use crate::error::ErrorCode;
use crate::pool::{Pool, PoolOptions};
use crate::registry::Shared;
use crate::transport::bridge::Attach;
use crate::transport::tls::{ConfigCache, TlsConfigError, TlsConnector, TlsOptions};
use parking_lot::Mutex;
use std::sync::Arc;
use tokio::runtime::{Builder, Handle};

pub use crate::registry::EventSink;

/// What the engine holds right now (see `Engine::counts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineCounts {
    /// Requests JS can still pause / resume / abort: queued, in flight or tunnelling.
    pub requests: usize,
    /// Connection tasks alive.
    pub connections: usize,
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

    fn shared(
        handle: Handle,
        sink: Arc<dyn EventSink>,
        driver: Option<Arc<DriverCtx>>,
    ) -> Arc<Shared> {
        Shared::new(handle, sink, driver)
    }

    pub fn create_pool(&self, id: u32, opts: PoolOptions) -> Arc<Pool> {
        Pool::new(id, opts, self.shared.clone())
    }

    /// The TLS side of a pool (`PoolOptions::tls`): the config shared by every pool with equal
    /// options, and the name verified (and sent as SNI) for this one.
    pub fn tls_connector(
        &self,
        opts: &TlsOptions,
        server_name: &str,
    ) -> Result<TlsConnector, TlsConfigError> {
        let config = self.tls_configs.lock().get(opts)?;
        TlsConnector::new(config, server_name)
    }

    /// Live requests and connections, for leak checks (soak script, tests).
    pub fn counts(&self) -> EngineCounts {
        EngineCounts { requests: self.shared.requests(), connections: self.shared.connections() }
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
    /// Starts the WebSocket session on upgraded request `id`, held since its 101 (`ws::session`).
    /// False: the request is gone (its connection closed meanwhile).
    pub fn start_websocket(&self, id: u32, start: crate::ws::start::Start) -> bool {
        match self.shared.ctl(id) {
            Some(c) => {
                c.start_websocket(start);
                true
            }
            None => false,
        }
    }
    /// Queues a WebSocket session's chunk without waking its connection (`ws_flush` does).
    /// False: wait for the drain event before sending more.
    pub fn ws_queue(&self, id: u32, chunk: Vec<u8>) -> bool {
        match self.shared.ctl(id) {
            Some(c) => c.queue_body(chunk),
            None => false,
        }
    }
    /// Wakes a WebSocket session's connection for what `ws_queue` queued.
    pub fn ws_flush(&self, id: u32) {
        if let Some(c) = self.shared.ctl(id) {
            c.wake_for_body();
        }
    }
    /// A request's streamed body failed after some of it was written: that part still goes out,
    /// then the request is aborted.
    pub fn fail_body(&self, id: u32) {
        if let Some(c) = self.shared.ctl(id) {
            c.fail_body();
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

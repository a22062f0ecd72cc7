//! The classes JavaScript holds: `NativeEngine` (one per JS environment) and `NativePool` (one per
//! Client/Pool). Every call is synchronous and cheap: it queues work for the engine thread.
use crate::queue::Queue;
use crate::request_head::HeadArg;
use ferro_engine::h2::H2Options;
use ferro_engine::h3::tls::QuicTls;
use ferro_engine::h3::{H3Options, Route};
use ferro_engine::{Engine, ErrorCode, Pool, PoolOptions, StreamLength, Target};
use napi::bindgen_prelude::*;
use napi::JsValue;
use napi_derive::napi;
use std::sync::Arc;
use std::time::Duration;

#[napi(object)]
pub struct PoolConfig {
    pub host: String,
    pub port: u32,
    pub socket_path: Option<String>,
    /// 0 = unlimited.
    pub connections: u32,
    pub pipelining: u32,
    /// Milliseconds; 0 = none.
    pub connect_timeout: u32,
    pub keep_alive_timeout: u32,
    pub keep_alive_max_timeout: u32,
    pub keep_alive_timeout_threshold: u32,
    pub max_header_size: u32,
    /// Bytes; negative = unlimited.
    pub max_response_size: f64,
    /// 0 = unlimited.
    pub max_requests_per_client: u32,
    /// Set for https origins.
    pub tls: Option<crate::tls_config::TlsConfig>,
    /// Connections come from JS (a custom `connect` function) through BRIDGE_OPEN events.
    pub bridged: Option<bool>,
    /// TCP keep-alive probes after this many idle ms (0: the system's default); absent or
    /// negative: none.
    pub tcp_keep_alive: Option<i32>,
    /// HTTP/2 sessions (when ALPN picks h2): streams at once per session (0: the server's limit).
    pub max_concurrent_streams: Option<u32>,
    pub initial_window_size: Option<u32>,
    pub connection_window_size: Option<u32>,
    /// Milliseconds between keep-alive PINGs; 0 or absent: none.
    pub ping_interval: Option<u32>,
    /// HTTP/2 without TLS (prior knowledge) on plain connections.
    // napi-rs would spell `h2c` as `h2C` in JS; the TS side sends `h2c`.
    #[napi(js_name = "h2c")]
    pub h2c: Option<bool>,
    /// A connection may turn out to be h2: the first one chooses before others open.
    pub protocol_probe: Option<bool>,
    /// The id of a `NativeConnCap` this pool's connections count against.
    pub cap: Option<u32>,
    /// HTTP/3 (`allowH3`, https origins): QUIC to an Alt-Svc endpoint set by `altSvc`, or with
    /// `h3PriorKnowledge` to the origin itself; the rest are `h3Options` (milliseconds, bytes).
    pub allow_h3: Option<bool>,
    pub h3_prior_knowledge: Option<bool>,
    pub h3_max_concurrent_streams: Option<u32>,
    pub h3_idle_timeout: Option<u32>,
    pub h3_initial_max_data: Option<u32>,
    pub h3_initial_max_stream_data: Option<u32>,
    /// How long an advertised endpoint may take before the request goes over TCP.
    pub h3_race: Option<u32>,
    /// Requests may go in 0-RTT early data on resumed connections (safe methods, no body).
    pub h3_zero_rtt: Option<bool>,
}

#[napi]
pub struct NativeEngine {
    pub(crate) engine: Arc<Engine>,
    queue: Arc<Queue>,
    next_pool: u32,
    /// The JS thread drives this engine (see src/inline.rs).
    #[cfg(target_os = "linux")]
    inline: Option<crate::inline::InlineLoop>,
    /// Why an inline engine was asked for and a threaded one made.
    fallback: Option<String>,
}

fn ms(v: u32) -> Option<Duration> {
    (v > 0).then(|| Duration::from_millis(v as u64))
}

#[napi]
impl NativeEngine {
    /// `onEvents(batch: Buffer, own?: Buffer[])` is called on the JS thread with packed events
    /// (and the payloads of their DATA_OWN events). `inline`: drive the engine from this thread's
    /// event loop instead of a thread of its own, where supported (see `driver` / `fallback` for
    /// what was made). `busyPollUs`: how long an inline engine's loop may wait awake for a reply
    /// before it sleeps (0: never; see src/inline/busy_poll.rs).
    #[napi(constructor, catch_unwind)]
    pub fn new(
        env: Env,
        on_events: Function<'_>,
        workers: Option<u32>,
        inline: Option<bool>,
        busy_poll_us: Option<u32>,
    ) -> Result<Self> {
        let queue = Queue::new(env.raw(), on_events.raw())?;
        let mut fallback = None;
        if inline == Some(true) {
            #[cfg(target_os = "linux")]
            match crate::inline::InlineLoop::start(
                env.raw(),
                &queue,
                on_events.raw(),
                busy_poll_us.map_or(ferro_engine::driver::busy_poll::DEFAULT_BUDGET, |us| {
                    Duration::from_micros(us.into())
                }),
            ) {
                Ok((engine, driver)) => {
                    return Ok(NativeEngine {
                        engine,
                        queue,
                        next_pool: 1,
                        inline: Some(driver),
                        fallback,
                    });
                }
                Err(why) => fallback = Some(why),
            }
            #[cfg(not(target_os = "linux"))]
            {
                fallback = Some("the inline engine needs Linux's epoll".to_owned());
            }
        }
        let engine = Engine::new(workers.unwrap_or(1).max(1) as usize, queue.clone())
            .map_err(|e| Error::from_reason(format!("ferro: cannot start the engine: {e}")))?;
        Ok(NativeEngine {
            engine: Arc::new(engine),
            queue,
            next_pool: 1,
            #[cfg(target_os = "linux")]
            inline: None,
            fallback,
        })
    }

    /// "inline" or "threaded": how this engine is driven.
    #[napi(getter)]
    pub fn driver(&self) -> &'static str {
        #[cfg(target_os = "linux")]
        if self.inline.is_some() {
            return "inline";
        }
        "threaded"
    }

    /// Inline engines that wait for replies awake (src/inline/busy_poll.rs): `[waits, woke]`, the
    /// waits made and how many ended with the loop having something to do. Null otherwise.
    #[napi(getter)]
    pub fn busy_poll(&self) -> Option<Vec<f64>> {
        #[cfg(target_os = "linux")]
        if let Some((waits, woke)) = self.inline.as_ref().and_then(|i| i.busy_poll_counts()) {
            return Some(vec![waits as f64, woke as f64]);
        }
        None
    }

    /// Why an inline engine was asked for and not made (absent otherwise).
    #[napi(getter)]
    pub fn fallback(&self) -> Option<String> {
        self.fallback.clone()
    }

    /// Inline engines: runs what is ready now (requests just flushed go out in this JS turn).
    /// Events it produces are delivered on a later turn, never from inside this call.
    #[napi(catch_unwind)]
    pub fn tick(&self) {
        #[cfg(target_os = "linux")]
        if let Some(i) = &self.inline {
            i.tick_from_js();
        }
    }

    /// `pool.flush()` then `tick()` in one call: a serial exchange on an inline engine crosses
    /// into native code once less. JS reaches it through a plain N-API callback
    /// (src/hot_calls.rs), as `NativePool.dispatch`.
    #[cfg_attr(test, allow(dead_code))] // only hot_calls calls it, unregistered in test builds
    pub(crate) fn flush_tick(&self, pool: &NativePool) {
        pool.pool.flush();
        self.tick();
    }

    #[napi(catch_unwind)]
    pub fn create_pool(&mut self, cfg: PoolConfig) -> Result<NativePool> {
        let h3 = match (&cfg.tls, cfg.allow_h3) {
            (Some(t), Some(true)) => {
                let zero_rtt = cfg.h3_zero_rtt.unwrap_or(false);
                Some(h3_options(&cfg, crate::tls_config::quic(t.clone(), &cfg.host, zero_rtt)?))
            }
            _ => None,
        };
        let tls = cfg
            .tls
            .map(|t| crate::tls_config::connector(&self.engine, t, &cfg.host))
            .transpose()?;
        let target = match cfg.socket_path {
            #[cfg(unix)]
            Some(path) => Target::Unix { path },
            #[cfg(not(unix))]
            Some(_) => {
                return Err(Error::from_reason("socketPath is not supported on this platform yet"))
            }
            None => {
                let port =
                    u16::try_from(cfg.port).map_err(|_| Error::from_reason("invalid port"))?;
                Target::Tcp { host: cfg.host, port }
            }
        };
        let cap = match cfg.cap {
            Some(id) => Some(
                crate::conn_cap::lookup(id)
                    .ok_or_else(|| Error::from_reason("unknown connection cap"))?,
            ),
            None => None,
        };
        let opts = PoolOptions {
            cap,
            target,
            tls,
            connections: cfg.connections as usize,
            pipelining: cfg.pipelining as usize,
            connect_timeout: ms(cfg.connect_timeout),
            keep_alive_timeout: Duration::from_millis(cfg.keep_alive_timeout as u64),
            keep_alive_max_timeout: Duration::from_millis(cfg.keep_alive_max_timeout as u64),
            keep_alive_timeout_threshold: Duration::from_millis(
                cfg.keep_alive_timeout_threshold as u64,
            ),
            max_header_size: cfg.max_header_size as usize,
            max_response_size: (cfg.max_response_size >= 0.0)
                .then_some(cfg.max_response_size as u64),
            max_requests_per_connection: cfg.max_requests_per_client as u64,
            bridged: cfg.bridged.unwrap_or(false),
            tcp_keep_alive: cfg
                .tcp_keep_alive
                .filter(|ms| *ms >= 0)
                .map(|ms| Duration::from_millis(ms as u64)),
            h2: {
                let d = H2Options::default();
                H2Options {
                    max_concurrent_streams: cfg
                        .max_concurrent_streams
                        .unwrap_or(d.max_concurrent_streams),
                    initial_window_size: cfg.initial_window_size.unwrap_or(d.initial_window_size),
                    connection_window_size: cfg
                        .connection_window_size
                        .unwrap_or(d.connection_window_size),
                    ping_interval: cfg.ping_interval.and_then(ms),
                    prior_knowledge: cfg.h2c.unwrap_or(false),
                    probe_protocol: cfg.protocol_probe.unwrap_or(false),
                }
            },
            h3,
        };
        let route = opts.h3.as_ref().map(|h| h.route.clone());
        let id = self.next_pool;
        self.next_pool = self.next_pool.wrapping_add(1).max(1);
        Ok(NativePool { pool: self.engine.create_pool(id, opts), route })
    }

    /// Keeps the process alive (requests in flight) or lets it exit (idle).
    #[napi(js_name = "ref", catch_unwind)]
    pub fn ref_(&self, env: Env) -> Result<()> {
        self.set_ref(env, true)
    }

    #[napi(catch_unwind)]
    pub fn unref(&self, env: Env) -> Result<()> {
        self.set_ref(env, false)
    }

    fn set_ref(&self, env: Env, on: bool) -> Result<()> {
        #[cfg(target_os = "linux")]
        if let Some(i) = &self.inline {
            i.set_ref(on);
            return Ok(());
        }
        self.queue.set_ref(env.raw(), on)
    }

    #[napi(catch_unwind)]
    pub fn pause(&self, id: u32) {
        self.engine.pause(id);
    }

    #[napi(catch_unwind)]
    pub fn resume(&self, id: u32) {
        self.engine.resume(id);
    }

    /// Queues bytes for a streamed request body or an upgraded connection. False: wait for the
    /// request's drain event before writing more.
    #[napi(catch_unwind)]
    pub fn write(&self, id: u32, chunk: BufferSlice<'_>) -> bool {
        self.engine.write(id, chunk.to_vec())
    }

    /// Ends a streamed body, or half-closes an upgraded connection.
    #[napi(catch_unwind)]
    pub fn end(&self, id: u32) {
        self.engine.end(id);
    }

    #[napi(catch_unwind)]
    pub fn abort(&self, id: u32) {
        self.engine.abort(id);
    }

    /// A streamed body's source failed: what was written still goes out, then the request is
    /// aborted (its connection closed).
    #[napi(catch_unwind)]
    pub fn fail_body(&self, id: u32) {
        self.engine.fail_body(id);
    }

    /// The socket asked for by BRIDGE_OPEN `id` is connected; `addrs` as upgraded sockets report
    /// them. False: nobody waits for it any more (destroy it).
    #[napi(catch_unwind)]
    pub fn bridge_attach(&self, id: u32, addrs: String) -> bool {
        self.engine.bridge_attach(id, addrs)
    }

    /// The `connect` function failed for BRIDGE_OPEN `id`; `code` is an engine error code.
    #[napi(catch_unwind)]
    pub fn bridge_fail(&self, id: u32, code: u32, errno: String, message: String) -> bool {
        let code =
            u16::try_from(code).ok().and_then(ErrorCode::from_u16).unwrap_or(ErrorCode::Connect);
        self.engine.bridge_fail(id, code, errno, message)
    }

    /// Bytes read from a bridged socket. False: pause it until its BRIDGE_DRAIN event.
    #[napi(catch_unwind)]
    pub fn bridge_data(&self, id: u32, chunk: BufferSlice<'_>) -> bool {
        self.engine.bridge_data(id, chunk.to_vec())
    }

    /// A bridged socket ended or closed.
    #[napi(catch_unwind)]
    pub fn bridge_end(&self, id: u32) {
        self.engine.bridge_end(id);
    }

    /// A bridged socket failed with Node's `err.code` (may be empty) and message.
    #[napi(catch_unwind)]
    pub fn bridge_error(&self, id: u32, errno: String, message: String) {
        self.engine.bridge_error(id, &errno, &message);
    }

    /// A bridged socket's write buffer is full (false: `write` returned false) or drained (true).
    #[napi(catch_unwind)]
    pub fn bridge_writable(&self, id: u32, writable: bool) {
        self.engine.bridge_writable(id, writable);
    }

    /// Live requests and connection tasks in the engine, for leak checks.
    #[napi(catch_unwind)]
    pub fn counts(&self) -> NativeEngineCounts {
        let c = self.engine.counts();
        NativeEngineCounts { requests: c.requests as u32, connections: c.connections as u32 }
    }

    /// Stops the engine thread and releases the event function.
    #[napi(catch_unwind)]
    pub fn close(&self) {
        self.queue.close();
        #[cfg(target_os = "linux")]
        if let Some(i) = &self.inline {
            i.close();
        }
    }
}

#[napi(object)]
pub struct NativeEngineCounts {
    pub requests: u32,
    pub connections: u32,
}

/// True when built with the `test-hooks` feature (`npm run build:native:dev`), whose engine has
/// test-only hooks (a request for `/__ferro_test_panic__` panics its connection task): tests skip
/// what needs them otherwise.
#[cfg_attr(test, allow(dead_code))] // only JS calls it: no napi registration in test builds
#[napi(catch_unwind)]
pub(crate) fn test_hooks() -> bool {
    cfg!(feature = "test-hooks")
}

/// The header names events send as an index (`header_names.rs`), in index order.
#[cfg_attr(test, allow(dead_code))] // only JS calls it: no napi registration in test builds
#[napi(catch_unwind)]
pub(crate) fn known_header_names() -> Vec<&'static str> {
    ferro_engine::header_names::KNOWN.to_vec()
}

/// The engine's boundary codes (event kinds, error codes, request flags) by group and name, so a
/// test can check the TypeScript constants against the one definition.
#[cfg_attr(test, allow(dead_code))] // only JS calls it: no napi registration in test builds
#[napi(catch_unwind)]
pub(crate) fn boundary_codes(
) -> std::collections::HashMap<String, std::collections::HashMap<String, u32>> {
    ferro_engine::boundary_codes()
        .into_iter()
        .map(|(group, table)| {
            (group.to_string(), table.iter().map(|(name, n)| (name.to_string(), *n)).collect())
        })
        .collect()
}

#[napi(object)]
pub struct NativePoolStats {
    pub connected: u32,
    pub free: u32,
    pub queued: u32,
}

#[napi]
pub struct NativePool {
    pool: Arc<Pool>,
    /// Where its connections go over QUIC (`allowH3` pools).
    route: Option<Arc<Route>>,
}

/// An `allowH3` pool's HTTP/3 settings (the defaults are ts/dispatcher/engine/h3-options.ts').
fn h3_options(cfg: &PoolConfig, tls: QuicTls) -> H3Options {
    H3Options {
        prior_knowledge: cfg.h3_prior_knowledge.unwrap_or(false),
        max_concurrent_streams: cfg.h3_max_concurrent_streams.unwrap_or(100),
        idle_timeout: Duration::from_millis(cfg.h3_idle_timeout.unwrap_or(30_000) as u64),
        initial_max_data: cfg.h3_initial_max_data.unwrap_or(4 << 20),
        initial_max_stream_data: cfg.h3_initial_max_stream_data.unwrap_or(1 << 20),
        race: Duration::from_millis(cfg.h3_race.unwrap_or(300) as u64),
        zero_rtt: cfg.h3_zero_rtt.unwrap_or(false),
        tls: Arc::new(tls),
        route: Arc::default(),
    }
}

#[napi]
impl NativePool {
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.pool.id
    }

    /// Queues a request; `flush` sends it. `head` is "METHOD\0PATH\0name\0value\0…"; timeouts in ms, 0 = none.
    /// With the STREAM_BODY flag the body follows through `NativeEngine.write` / `end`, framed by
    /// `body_length` (negative: chunked). Returns false when the pool was destroyed; throws an
    /// error with code `InvalidArg` and undici's message when the head breaks its rules (the one
    /// check the engine makes of it: `request::Head`).
    // Flat arguments keep the per-request N-API call cheap (no object to unpack). JS reaches it
    // through a plain N-API callback (src/hot_calls.rs), not a napi-rs method.
    #[allow(clippy::too_many_arguments)]
    #[cfg_attr(test, allow(dead_code))]
    pub(crate) fn dispatch(
        &self,
        id: u32,
        head: HeadArg,
        body: Option<BufferSlice<'_>>,
        flags: u32,
        headers_timeout: u32,
        body_timeout: u32,
        body_length: f64,
    ) -> Result<bool> {
        let head = head.0.map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
        let body = body.map(|b| b.to_vec());
        let stream_length = if body_length >= 0.0 {
            StreamLength::Known(body_length as u64)
        } else {
            StreamLength::Chunked
        };
        Ok(self
            .pool
            .dispatch(id, head, body, flags, stream_length, ms(headers_timeout), ms(body_timeout))
            .is_ok())
    }

    /// Gets the requests queued by `dispatch` since the last flush moving (one engine wake per
    /// JS tick instead of one per request). Called as `dispatch` is (src/hot_calls.rs).
    #[cfg_attr(test, allow(dead_code))]
    pub(crate) fn flush(&self) {
        self.pool.flush();
    }

    /// `{ connected, free, queued }` right now (JS adds what it has in flight).
    #[napi(catch_unwind)]
    pub fn stats(&self) -> NativePoolStats {
        let s = self.pool.stats();
        NativePoolStats {
            connected: s.connected as u32,
            free: s.free as u32,
            queued: s.queued as u32,
        }
    }

    /// An HTTPS response advertised HTTP/3 (`Alt-Svc: h3`): later connections try QUIC to
    /// `host` (empty: the origin's) and `port` for `maxAgeMs`; `maxAgeMs` 0 clears the entry.
    #[napi(catch_unwind)]
    pub fn alt_svc(&self, host: String, port: u32, max_age_ms: f64) {
        let Some(route) = &self.route else { return };
        match u16::try_from(port) {
            Ok(port) if port > 0 && max_age_ms > 0.0 => route.advertise(
                &host,
                port,
                Duration::from_millis(max_age_ms.min(1e15) as u64),
                std::time::Instant::now(),
            ),
            _ => route.clear(),
        }
    }

    /// Its queued requests wait for a slot of its Agent's maxGlobalConnections.
    #[napi(catch_unwind)]
    pub fn waits_for_cap(&self) -> bool {
        self.pool.waits_for_cap()
    }

    #[napi(catch_unwind)]
    pub fn close(&self) {
        self.pool.close();
    }

    /// No request waits any more: connection attempts under way are given up.
    #[napi(catch_unwind)]
    pub fn cancel_unused(&self) {
        self.pool.cancel_unused();
    }

    #[napi(catch_unwind)]
    pub fn destroy(&self) {
        self.pool.destroy();
    }
}

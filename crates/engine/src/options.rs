//! A pool's options, as the binding sets them; connections read them too.
use crate::transport::Target;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct PoolOptions {
    pub target: Target,
    /// TLS on top of `target` (https origins); built by `Engine::tls_connector`.
    pub tls: Option<crate::transport::tls::TlsConnector>,
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
    pub h2: crate::h2::options::H2Options,
    /// HTTP/3 (`allowH3`): None, never; else when a connection tries QUIC (`h3::route`).
    pub h3: Option<crate::h3::options::H3Options>,
    /// A cap on connections shared with other pools (an Agent's `maxGlobalConnections`).
    pub cap: Option<std::sync::Arc<crate::cap::ConnCap>>,
}

impl PoolOptions {
    /// One connection to `target`, no pipelining or TLS, undici's keep-alive timings and a 16 KiB
    /// header limit: what the engine's own tests start from (the binding sets every field).
    pub fn basic(target: Target) -> PoolOptions {
        PoolOptions {
            target,
            tls: None,
            connections: 1,
            pipelining: 1,
            connect_timeout: None,
            keep_alive_timeout: Duration::from_secs(4),
            keep_alive_max_timeout: Duration::from_secs(600),
            keep_alive_timeout_threshold: Duration::from_secs(2),
            max_header_size: 16384,
            max_response_size: None,
            max_requests_per_connection: 0,
            bridged: false,
            tcp_keep_alive: None,
            h2: Default::default(),
            h3: None,
            cap: None,
        }
    }
}

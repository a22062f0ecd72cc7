//! A pool's HTTP/3 settings (`allowH3` / `h3Options` in JS).
use super::route::Route;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct H3Options {
    /// Straight to HTTP/3 on the origin's own host and port, without TCP, and no fallback.
    pub prior_knowledge: bool,
    /// Request streams open at once on one connection (the server's stream limit applies too).
    pub max_concurrent_streams: u32,
    /// The QUIC idle timeout.
    pub idle_timeout: Duration,
    /// QUIC flow control: the connection's and each stream's receive window.
    pub initial_max_data: u32,
    pub initial_max_stream_data: u32,
    /// How long an advertised endpoint has to complete its handshake before the connection goes
    /// over TCP instead (the endpoint is then marked broken).
    pub race: Duration,
    /// Resumed connections send safe, bodiless requests in 0-RTT early data (`zero_rtt.rs`).
    pub zero_rtt: bool,
    /// The TLS config for QUIC (ALPN `h3`, TLS 1.3), built from the pool's TLS options.
    pub tls: Arc<super::tls::QuicTls>,
    /// Where QUIC goes, shared with the binding (which records Alt-Svc endpoints into it).
    pub route: Arc<Route>,
}

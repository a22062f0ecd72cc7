//! A pool's HTTP/2 settings.
use std::time::Duration;

/// HTTP/2 settings of a pool (undici's `maxConcurrentStreams`, `initialWindowSize`,
/// `connectionWindowSize`, `pingInterval`).
#[derive(Debug, Clone)]
pub struct H2Options {
    /// Streams open at once on one session at most (the server's limit applies too); 0: only the server's.
    pub max_concurrent_streams: u32,
    pub initial_window_size: u32,
    pub connection_window_size: u32,
    /// PING the server this often while the session is up; None: never.
    pub ping_interval: Option<Duration>,
    /// Speak h2 on plain (non-TLS) connections without negotiating (h2c, RFC 9113 §3.3).
    pub prior_knowledge: bool,
    /// A connection may turn out to be h2 (https offering it in ALPN, or h2c): until the first one
    /// has chosen its protocol, the pool opens no other, so a burst shares one h2 session instead
    /// of opening a TLS connection per request (undici 8.11's protocol probe).
    pub probe_protocol: bool,
}

impl Default for H2Options {
    fn default() -> Self {
        H2Options {
            max_concurrent_streams: 100,
            initial_window_size: 256 * 1024,
            connection_window_size: 512 * 1024,
            ping_interval: None,
            prior_knowledge: false,
            probe_protocol: false,
        }
    }
}

//! HTTP/3: QUIC by `quinn` (on the same rustls + ring as TCP TLS), HTTP/3 framing and QPACK by the
//! `h3` crate; this module maps the pool's requests onto request streams and their results onto
//! the same events HTTP/1.1 and HTTP/2 produce. The pieces:
//! - `options.rs`: a pool's HTTP/3 settings;
//! - `route.rs`: whether a connection tries QUIC at all (prior knowledge, an Alt-Svc endpoint JS
//!   learned, a broken endpoint's back-off), pure and unit-tested;
//! - `runtime.rs`: quinn's timers and tasks on the engine's driver (the inline driver must see
//!   them);
//! - `tls.rs`: the QUIC TLS config, and Node's codes for a handshake that failed;
//! - `connect.rs`: the QUIC handshake, and the race against TCP when the endpoint was advertised;
//! - `session.rs` / `stream.rs`: the session (one QUIC connection) and its request streams;
//! - `zero_rtt.rs`: requests in early data on a resumed connection (`zeroRtt`), and what becomes
//!   of them when the server rejects it or answers 425.
mod connect;
pub mod options;
pub mod route;
mod runtime;
mod session;
mod setup;
mod stream;
pub mod tls;
mod zero_rtt;

pub use options::H3Options;
pub use route::Route;

use crate::conn::session::GAVE_UP;
use crate::error::ErrorCode;
use crate::owner::ConnOwner;
use connect::{attempt, Attempt};
use std::sync::Arc;
use tokio::sync::Notify;

/// A connection's HTTP/3 part (`conn::run` calls it first): when the pool allows HTTP/3 and its
/// route says QUIC, the attempt and then the session. False: the connection goes on over TCP.
pub(crate) async fn run(pool: &Arc<dyn ConnOwner>, conn_id: u64, give_up: &Notify) -> bool {
    let Some(h3) = pool.opts().h3.as_ref() else { return false };
    let attempt = tokio::select! {
        biased;
        a = attempt(&**pool, conn_id, h3) => a,
        _ = give_up.notified() => {
            pool.connect_failed(conn_id, ErrorCode::Info, "", "", GAVE_UP);
            return true;
        }
    };
    match attempt {
        Attempt::Quic(endpoint, conn, addrs, early) => {
            session::run(pool.clone(), conn_id, endpoint, conn, addrs, early).await;
            true
        }
        Attempt::Failed => true,
        Attempt::Tcp => false,
    }
}

//! One connection of a pool, as one task (the driver): connect, let ALPN pick the protocol, run
//! that protocol's session over the socket until it ends, and tell the pool. The pieces:
//! - `connect.rs`: dialing (or a bridged socket from JS), TLS, the address string;
//! - `session.rs`: what a session is, the protocol chosen, and the one `End` every session has;
//! - `http1.rs`: the HTTP/1.1 session, a hand-written `poll` (the state machine the driver polls);
//! - `pipeline.rs`: its pipeline and the pipelining / resend rules (pure, unit-tested);
//! - `buffers.rs`: its read and write buffers;
//! - `tunnel.rs`: the tunnel session, the socket after an upgrade or a CONNECT, a byte tunnel to JS.
//!
//! HTTP/2 sessions live in `crate::h2`. Every session takes work through the pool's `ConnOwner`
//! interface.
pub(crate) mod buffers;
mod connect;
mod http1;
mod pipeline;
pub(crate) mod session;
mod tunnel;

use crate::error::ErrorCode;
use crate::owner::ConnOwner;
use session::{End, Protocol, GAVE_UP};
use std::sync::Arc;
use tokio::sync::Notify;

/// `give_up` is notified when no request waits for this connection any more while it connects
/// (undici cancels such an attempt): the attempt ends without failing anything.
pub(crate) async fn run(pool: Arc<dyn ConnOwner>, conn_id: u64, give_up: Arc<Notify>) {
    // Counted as alive for as long as the task exists (also when it ends by a panic or an abort).
    let _alive = pool.shared().conn_alive();
    pool.connecting();
    // HTTP/3 where the pool allows it: a QUIC session, or on to TCP (`crate::h3::connect`).
    if crate::h3::run(&pool, conn_id, &give_up).await {
        return;
    }
    let connected = tokio::select! {
        biased;
        c = connect::connect(&*pool, conn_id) => c,
        _ = give_up.notified() => {
            pool.connect_failed(conn_id, ErrorCode::Info, "", "", GAVE_UP);
            return;
        }
    };
    let Some((io, addrs)) = connected else { return };
    let end = match Protocol::negotiated(&addrs, pool.opts().h2.prior_knowledge) {
        Protocol::H2 => crate::h2::session::run(pool.clone(), conn_id, io, addrs).await,
        Protocol::H1 => http1::run(pool.clone(), conn_id, io, addrs).await,
    };
    if let End::Upgraded(up) = end {
        // A WebSocket handshake's connection becomes the engine's WebSocket session inside
        // `tunnel::run` (`crate::ws::session`); any other upgrade or CONNECT is a byte tunnel.
        tunnel::run(pool, *up).await;
    }
}

//! A connection's QUIC attempt, before any TCP: with prior knowledge to the origin (failures are
//! reported), or to an Alt-Svc endpoint JS learned, raced against the clock: an endpoint that has
//! not completed its handshake within `race` (nothing listening, UDP black-holed, a handshake
//! error) is marked broken and the connection goes over TCP, so the request never waits longer.
use super::options::H3Options;
use super::route::Plan;
use super::runtime::EngineRuntime;
use super::zero_rtt::Early;
use crate::error::ErrorCode;
use crate::owner::ConnOwner;
use crate::timings::ConnStamps;
use crate::transport::Target;
use quinn::{
    ClientConfig, Connection, Endpoint, EndpointConfig, TransportConfig, VarInt, ZeroRttAccepted,
};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the connection does after its QUIC attempt.
pub(super) enum Attempt {
    /// QUIC is up: run the HTTP/3 session (`addrs` as `connect.rs` words them, ALPN `h3`); or
    /// it is starting in 0-RTT (`Early`), its handshake still going on.
    Quic(Endpoint, Connection, String, Option<Early>),
    /// No QUIC for this connection: connect over TCP as usual.
    Tcp,
    /// Prior knowledge failed; `connect_failed` was reported.
    Failed,
}

/// Why a QUIC attempt failed: the pool's error code, Node's `code` and the message.
struct Failure(ErrorCode, &'static str, String);

pub(super) async fn attempt(owner: &dyn ConnOwner, conn_id: u64, h3: &H3Options) -> Attempt {
    let (origin_host, origin_port) = match &owner.opts().target {
        Target::Tcp { host, port } => (host.as_str(), *port),
        #[cfg(unix)]
        Target::Unix { .. } => return Attempt::Tcp,
    };
    let (host, port, fallback) =
        match h3.route.plan(h3.prior_knowledge, origin_host, origin_port, Instant::now()) {
            Plan::Tcp => return Attempt::Tcp,
            Plan::Quic { host, port, fallback } => (host, port, fallback),
        };
    let limit = if fallback { Some(h3.race) } else { owner.opts().connect_timeout };
    let quic = handshake(h3, &host, port);
    let result = match limit {
        Some(t) => match crate::driver::timer::timeout(t, quic).await {
            Ok(r) => r,
            Err(_) => Err(Failure(ErrorCode::ConnectTimeout, "", "Connect Timeout Error".into())),
        },
        None => quic.await,
    };
    match result {
        Ok((endpoint, conn, accepted, stamps)) => {
            owner.stamped(conn_id, stamps);
            h3.route.works();
            let local = endpoint.local_addr().ok();
            let local_ip = conn.local_ip().or(local.map(|a| a.ip()));
            let remote = conn.remote_address();
            let addrs = format!(
                "{}|{}|{}|{}|tls|h3",
                local_ip.map(|ip| ip.to_string()).unwrap_or_default(),
                local.map(|a| a.port()).unwrap_or(0),
                remote.ip(),
                remote.port()
            );
            let early = accepted.map(|accepted| Early { accepted, limit, fallback });
            Attempt::Quic(endpoint, conn, addrs, early)
        }
        Err(_) if fallback => {
            h3.route.broken(Instant::now());
            Attempt::Tcp
        }
        Err(Failure(code, errno, msg)) => {
            owner.connect_failed(conn_id, code, errno, "", &msg);
            Attempt::Failed
        }
    }
}

/// Resolves `host`, opens a UDP socket of the address's family and completes the QUIC handshake,
/// or with `zeroRtt` and a session to resume only starts it (quinn's verdict on the early data
/// comes with it). The stamps (`timings`): `dns` once a name resolved; `connect` and `tls` both
/// when the handshake finished, or started in 0-RTT (QUIC's connection and TLS handshakes are one).
async fn handshake(
    h3: &H3Options,
    host: &str,
    port: u16,
) -> Result<(Endpoint, Connection, Option<ZeroRttAccepted>, ConnStamps), Failure> {
    let mut stamps = ConnStamps::default();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let ip = match bare.parse::<IpAddr>() {
        Ok(ip) => ip,
        Err(_) => {
            let resolved = crate::dns::resolver().resolve(bare, crate::dns::DEFAULT_TTL).await;
            stamps.dns = crate::timings::now();
            match resolved.map(|a| a.first().copied()) {
                Ok(Some(ip)) => ip,
                Ok(None) => {
                    return Err(Failure(
                        ErrorCode::Connect,
                        "ENOTFOUND",
                        format!("getaddrinfo ENOTFOUND {bare}"),
                    ))
                }
                Err(e) => return Err(Failure(ErrorCode::Connect, e.code, e.message)),
            }
        }
    };
    let io = |e: std::io::Error| {
        Failure(ErrorCode::Connect, crate::error::errno_name(&e), format!("QUIC: {e}"))
    };
    let bind: SocketAddr = match ip {
        IpAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
        IpAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = UdpSocket::bind(bind).map_err(io)?;
    let endpoint = Endpoint::new(EndpointConfig::default(), None, socket, Arc::new(EngineRuntime))
        .map_err(io)?;
    let connecting = endpoint
        .connect_with(client_config(h3), SocketAddr::new(ip, port), &h3.tls.server_name)
        .map_err(|e| Failure(ErrorCode::Connect, "", format!("QUIC: {e}")))?;
    let connecting = match h3.zero_rtt {
        // Refused when there is no session to resume (or it allows no early data).
        true => match connecting.into_0rtt() {
            Ok((conn, accepted)) => {
                stamps.connect = crate::timings::now();
                stamps.tls = stamps.connect;
                return Ok((endpoint, conn, Some(accepted), stamps));
            }
            Err(connecting) => connecting,
        },
        false => connecting,
    };
    match connecting.await {
        Ok(conn) => {
            stamps.connect = crate::timings::now();
            stamps.tls = stamps.connect;
            Ok((endpoint, conn, None, stamps))
        }
        Err(e) => Err(match h3.tls.verify_failure() {
            // An untrusted certificate: Node's code, as over TCP.
            Some((errno, msg)) => Failure(ErrorCode::Connect, errno, msg),
            None => describe_connect(&e),
        }),
    }
}

fn describe_connect(e: &quinn::ConnectionError) -> Failure {
    use quinn::ConnectionError as E;
    match e {
        E::TimedOut => Failure(ErrorCode::ConnectTimeout, "", "Connect Timeout Error".into()),
        E::TransportError(t)
            if t.code.to_string().contains("crypto") || t.reason.contains("TLS") =>
        {
            Failure(
                ErrorCode::Connect,
                "ERR_SSL_HANDSHAKE_FAILURE",
                format!("QUIC handshake failed: {t}"),
            )
        }
        E::ConnectionClosed(c) if c.error_code.to_string().contains("crypto") => Failure(
            ErrorCode::Connect,
            "ERR_SSL_HANDSHAKE_FAILURE",
            format!("QUIC handshake failed: {c}"),
        ),
        other => Failure(ErrorCode::Connect, "ECONNREFUSED", format!("QUIC: {other}")),
    }
}

fn client_config(h3: &H3Options) -> ClientConfig {
    let mut cfg = ClientConfig::new(h3.tls.config.clone());
    let mut t = TransportConfig::default();
    // The server opens no request streams; its unidirectional ones (control, QPACK) stay allowed.
    t.max_concurrent_bidi_streams(VarInt::from_u32(0));
    t.receive_window(VarInt::from_u32(h3.initial_max_data));
    t.stream_receive_window(VarInt::from_u32(h3.initial_max_stream_data));
    if !h3.idle_timeout.is_zero() {
        t.max_idle_timeout(quinn::IdleTimeout::try_from(h3.idle_timeout).ok());
        // Keep-alives well inside the idle timeout: a quiet connection in the pool stays usable.
        t.keep_alive_interval(Some(h3.idle_timeout.max(Duration::from_millis(200)) / 3));
    }
    cfg.transport_config(Arc::new(t));
    cfg
}

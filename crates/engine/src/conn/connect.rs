//! Making a connection: dialing the target (or asking JS for a bridged socket), TLS, socket
//! options, and the address string JS is told (see `events.rs`).
use crate::dns::DialError;
use crate::error::{errno_name, ErrorCode};
use crate::events::socket_info;
use crate::owner::ConnOwner;
use crate::timings::ConnStamps;
use crate::transport::{bridge, ConnectError, Transport};

/// Connects for `owner`; on failure reports it (`connect_failed`) and returns None. Returns the
/// transport and its addresses: "localIp|localPort|remoteIp|remotePort", plus "|tls|<alpn>" on
/// TLS connections. The owner hears when its phases ended (`ConnOwner::stamped`).
pub(super) async fn connect(owner: &dyn ConnOwner, conn_id: u64) -> Option<(Transport, String)> {
    let opts = owner.opts();
    let mut stamps = ConnStamps::default();
    // A bridged socket's addresses come from JS, which knows them.
    let mut bridge_addrs = None;
    let connected = if opts.bridged {
        let started = tokio::time::Instant::now();
        match bridge::open(owner.shared(), owner.id(), opts.connect_timeout).await {
            Ok((io, addrs)) => {
                bridge_addrs = Some(addrs);
                stamps.connect = crate::timings::now();
                match opts.tls.as_ref() {
                    // The JS socket is a plain byte stream (a proxy tunnel): TLS to the origin is
                    // the engine's, within what is left of the connect timeout.
                    Some(tls) => {
                        let left =
                            opts.connect_timeout.map(|t| t.saturating_sub(started.elapsed()));
                        Transport::tls_over_bridge(io, tls, left, &mut stamps).await
                    }
                    None => Ok(Transport::Bridged(io)),
                }
            }
            Err(e) => Err(e),
        }
    } else {
        Transport::connect(&opts.target, opts.tls.as_ref(), opts.connect_timeout, &mut stamps).await
    };
    let io = match connected {
        Ok(io) => io,
        Err(ConnectError::Timeout) => {
            owner.connect_failed(
                conn_id,
                ErrorCode::ConnectTimeout,
                "",
                "",
                "Connect Timeout Error",
            );
            return None;
        }
        Err(ConnectError::Io(e)) => {
            let code = errno_name(&e);
            let dialed =
                e.get_ref().and_then(|inner| inner.downcast_ref::<DialError>()).map(|d| d.addr);
            let (socket, msg) = match dialed {
                // As Node words it ("connect ECONNREFUSED 127.0.0.1:8080"); JS sets `address` /
                // `port` from the socket field (remote side only: nothing was bound).
                Some(a) => (
                    socket_info(0, 0, &format!("||{}|{}", a.ip(), a.port())),
                    format!("connect {code} {}:{}", a.ip(), a.port()),
                ),
                None => (String::new(), format!("connect {code}: {e}")),
            };
            owner.connect_failed(conn_id, ErrorCode::Connect, code, &socket, &msg);
            return None;
        }
        Err(ConnectError::Tls { errno, message }) => {
            owner.connect_failed(conn_id, ErrorCode::Connect, errno, "", &message);
            return None;
        }
        Err(ConnectError::Bridge { code, errno, message }) => {
            owner.connect_failed(conn_id, code, &errno, "", &message);
            return None;
        }
    };
    if let (Some(idle), Some(tcp)) = (opts.tcp_keep_alive, io.tcp()) {
        // Best effort, as Node's setKeepAlive: a socket that refuses still works.
        let mut ka = socket2::TcpKeepalive::new();
        if !idle.is_zero() {
            ka = ka.with_time(idle);
        }
        let _ = socket2::SockRef::from(tcp).set_tcp_keepalive(&ka);
    }
    // Addresses as upgraded sockets report them (remoteAddress / localPort ...).
    let tcp = io.tcp().map(|s| (s.local_addr(), s.peer_addr()));
    let addrs = match (tcp, bridge_addrs) {
        (_, Some(addrs)) => addrs,
        (Some((Ok(l), Ok(r))), None) => format!("{}|{}|{}|{}", l.ip(), l.port(), r.ip(), r.port()),
        _ => "|||".to_string(),
    };
    // "|tls|<alpn>" after the addresses tells JS the socket is encrypted and what ALPN chose.
    let addrs = if io.is_tls() {
        format!("{addrs}|tls|{}", io.alpn().map(String::from_utf8_lossy).unwrap_or_default())
    } else {
        addrs
    };
    owner.stamped(conn_id, stamps);
    Some((io, addrs))
}

//! Happy eyeballs v2 (RFC 8305) for TCP connects to a host name: addresses interleaved by family
//! (§4), a new attempt every [`CONNECTION_ATTEMPT_DELAY`] or as soon as the previous one fails
//! (§5), the first to connect wins and the rest are dropped. Each failure is reported to the
//! resolver so that address moves to the back for the next connect.
use super::cache::resolver;
use super::cache::DEFAULT_TTL;
use crate::driver::task::tracked;
use crate::driver::Timer;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::task::JoinSet;

/// RFC 8305 §5 recommends 250 ms.
const CONNECTION_ATTEMPT_DELAY: Duration = Duration::from_millis(250);

/// Orders addresses for attempts: alternate families, starting with the family of the first one
/// (the system resolver's preference, RFC 6724), each family keeping its own order.
pub fn interleave(addrs: &[IpAddr]) -> Vec<IpAddr> {
    let Some(first) = addrs.first() else { return Vec::new() };
    let (mut a, mut b): (Vec<IpAddr>, Vec<IpAddr>) =
        addrs.iter().partition(|x| x.is_ipv6() == first.is_ipv6());
    a.reverse();
    b.reverse();
    let mut out = Vec::with_capacity(addrs.len());
    loop {
        match (a.pop(), b.pop()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y)),
        }
    }
}

async fn attempt(addr: SocketAddr) -> (IpAddr, io::Result<TcpStream>) {
    (addr.ip(), dial(addr).await)
}

/// A failed connect to one address. Node's connect errors name it (`address` / `port`, and in
/// the message), and code that tells upstreams apart reads them (undici passes them through).
#[derive(Debug)]
pub struct DialError {
    pub addr: SocketAddr,
    pub source: io::Error,
}

impl std::fmt::Display for DialError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for DialError {}

/// Connects to `addr`; a failure keeps its kind and carries the address (`DialError`).
async fn dial(addr: SocketAddr) -> io::Result<TcpStream> {
    TcpStream::connect(addr)
        .await
        .map_err(|source| io::Error::new(source.kind(), DialError { addr, source }))
}

/// Connects to `host:port`: an IP literal directly, a name through the shared cache and happy
/// eyeballs. The error is the last attempt's. `resolved` is stamped when a name's addresses are
/// known (`timings`).
pub async fn connect(host: &str, port: u16, resolved: &mut u64) -> io::Result<TcpStream> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return dial(SocketAddr::new(ip, port)).await;
    }
    let addrs = resolver()
        .resolve(host, DEFAULT_TTL)
        .await
        // Carried whole so `errno_name` reports its code (ENOTFOUND, ...), as Node's connect does.
        .map_err(io::Error::other)?;
    *resolved = crate::timings::now();
    race(host, &interleave(&addrs), port, CONNECTION_ATTEMPT_DELAY).await
}

/// Runs the staggered attempts over `order`.
pub(super) async fn race(
    host: &str,
    order: &[IpAddr],
    port: u16,
    delay: Duration,
) -> io::Result<TcpStream> {
    let mut set = JoinSet::new();
    let mut next = 0;
    let mut last_err: Option<io::Error> = None;
    loop {
        if set.is_empty() {
            let Some(&ip) = order.get(next) else {
                return Err(last_err.unwrap_or_else(|| {
                    io::Error::new(io::ErrorKind::NotFound, format!("no addresses for {host}"))
                }));
            };
            set.spawn(tracked(attempt(SocketAddr::new(ip, port))));
            next += 1;
        }
        let more = next < order.len();
        tokio::select! {
            done = set.join_next() => match done {
                Some(Ok((_, Ok(stream)))) => return Ok(stream),
                Some(Ok((ip, Err(e)))) => {
                    resolver().report_failure(host, ip);
                    last_err = Some(e);
                    // A failure starts the next attempt at once (§5).
                    if let Some(&ip) = order.get(next) {
                        set.spawn(tracked(attempt(SocketAddr::new(ip, port))));
                        next += 1;
                    }
                }
                Some(Err(join)) => last_err = Some(io::Error::other(join.to_string())),
                None => {}
            },
            _ = Timer::after(delay), if more => {
                set.spawn(tracked(attempt(SocketAddr::new(order[next], port))));
                next += 1;
            }
        }
    }
}

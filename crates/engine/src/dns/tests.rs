use super::happy::race;
use super::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

fn v4(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}
fn v6(n: u16) -> IpAddr {
    IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, n))
}

#[test]
fn interleaves_families_starting_with_the_first() {
    assert_eq!(
        interleave(&[v6(1), v6(2), v4(1), v4(2), v4(3)]),
        vec![v6(1), v4(1), v6(2), v4(2), v4(3)]
    );
    assert_eq!(interleave(&[v4(1), v6(1), v6(2)]), vec![v4(1), v6(1), v6(2)]);
    assert_eq!(interleave(&[v4(1), v4(2)]), vec![v4(1), v4(2)]);
    assert!(interleave(&[]).is_empty());
}

#[test]
fn caches_lookups_and_honours_max_age() {
    let r = resolver();
    let before = r.misses();
    let a = r.resolve_blocking("localhost", Duration::from_secs(60)).unwrap();
    assert!(a.iter().any(|ip| ip.is_loopback()));
    let b = r.resolve_blocking("localhost", Duration::from_secs(60)).unwrap();
    assert_eq!(a, b);
    assert!(r.misses() - before <= 1, "the second lookup is a cache hit");
    let n = r.misses();
    r.resolve_blocking("localhost", Duration::ZERO).unwrap();
    assert_eq!(r.misses(), n + 1, "max_age 0 always asks the system");
}

#[test]
fn unknown_names_are_enotfound() {
    let e =
        resolver().resolve_blocking("does-not-exist.invalid", Duration::from_secs(1)).unwrap_err();
    assert!(e.code == "ENOTFOUND" || e.code == "EAI_AGAIN", "{e:?}");
}

#[test]
fn failures_rotate_to_the_back() {
    let r = Resolver::new();
    r.store("h", vec![v4(1), v4(2), v4(3)]);
    r.report_failure("h", v4(1));
    assert_eq!(r.cached("h", Duration::from_secs(9)).unwrap(), vec![v4(2), v4(3), v4(1)]);
}

#[tokio::test]
async fn a_refused_address_falls_through_to_the_next_at_once() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    // 127.0.0.2 has nothing on `port`: refused fast, so the second attempt starts without waiting
    // for the stagger delay.
    let host = "refused-then-ok.test";
    resolver().store(host, vec![v4(2), v4(1)]);
    let t = Instant::now();
    let s = race(host, &[v4(2), v4(1)], port, Duration::from_secs(5)).await.unwrap();
    assert!(t.elapsed() < Duration::from_secs(4));
    assert_eq!(s.peer_addr().unwrap().ip(), v4(1));
    assert_eq!(resolver().cached(host, Duration::from_secs(9)).unwrap(), vec![v4(1), v4(2)]);
}

#[tokio::test]
async fn a_silent_address_is_raced_after_the_delay() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    // 192.0.2.1 (TEST-NET-1) is never answered (or unreachable, depending on the network): either
    // way the next attempt starts within the delay and wins, long before a connect would time out.
    let silent = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
    let s = tokio::time::timeout(
        Duration::from_secs(5),
        race("silent.test", &[silent, v4(1)], port, Duration::from_millis(50)),
    )
    .await
    .expect("the second attempt was not started")
    .unwrap();
    assert_eq!(s.peer_addr().unwrap().ip(), v4(1));
}

#[tokio::test]
async fn all_failing_returns_the_last_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let e = race("none.test", &[v4(1)], port, Duration::from_millis(10)).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
    // It names the address tried, and keeps Node's code.
    let dialed =
        e.get_ref().and_then(|inner| inner.downcast_ref::<super::DialError>()).map(|d| d.addr);
    assert_eq!(dialed, Some(std::net::SocketAddr::new(v4(1), port)));
    assert_eq!(crate::error::errno_name(&e), "ECONNREFUSED");
}

#[tokio::test]
async fn a_refused_ipv4_falls_back_to_ipv6() {
    // Only ::1 listens (skip where the machine has no IPv6 loopback).
    let Ok(listener) = tokio::net::TcpListener::bind("[::1]:0").await else { return };
    let port = listener.local_addr().unwrap().port();
    let order = interleave(&[v4(1), IpAddr::V6(Ipv6Addr::LOCALHOST)]);
    let s = race("dual.test", &order, port, Duration::from_secs(5)).await.unwrap();
    assert_eq!(s.peer_addr().unwrap().ip(), IpAddr::V6(Ipv6Addr::LOCALHOST));
}

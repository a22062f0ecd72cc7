//! Unit tests of the connection cap with real pools (apart from `cap.rs`, which names no pool).
use crate::cap::*;
use crate::owner::{ConnOwner, Taker};
use crate::pool::Pool;
use crate::registry::Shared;
use crate::request::{flags, Request, StreamLength};
use crate::test_events::Events;
use std::sync::Arc;
use std::task::Waker;

/// Takes up to `room` requests.
struct Conn(usize, Vec<u32>);
impl Taker for Conn {
    fn wants_more(&self) -> bool {
        self.1.len() < self.0
    }
    fn admits(&self, _: &Request) -> bool {
        true
    }
    fn submit(&mut self, req: Request) {
        self.1.push(req.id);
    }
}

/// An unlimited pool under `cap` with requests `ids` queued and flushed. Nothing is awaited,
/// so the connection tasks it spawns never run: the tests play them.
fn pool(cap: &Arc<ConnCap>, ids: std::ops::RangeInclusive<u32>) -> Arc<Pool> {
    let shared = Shared::new(tokio::runtime::Handle::current(), Arc::new(Events::default()), None);
    let mut opts = crate::options::PoolOptions::basic(crate::transport::Target::Tcp {
        host: "127.0.0.1".into(),
        port: 9,
    });
    opts.connections = 0;
    opts.cap = Some(cap.clone());
    let p = Pool::new(1, opts, shared);
    for id in ids {
        p.dispatch(
            id,
            "GET\0/\0".into(),
            None,
            flags::IDEMPOTENT,
            StreamLength::Chunked,
            None,
            None,
        )
        .unwrap();
    }
    p.flush();
    p
}

fn take(p: &Pool, conn: u64, room: usize) -> Vec<u32> {
    let mut c = Conn(room, Vec::new());
    p.take(conn, Waker::noop(), &mut c);
    c.1
}

#[tokio::test]
async fn slots_never_exceed_the_limit_and_go_to_waiting_pools_in_turn() {
    let cap = ConnCap::new(2);
    let a = pool(&cap, 1..=3);
    assert_eq!((cap.open(), cap.waiting()), (2, 1), "two of a's three requests get a connection");
    let b = pool(&cap, 1..=2);
    assert_eq!((cap.open(), cap.waiting()), (2, 2), "b waits too");
    // A connection of a ends: a waited first, but holds a slot and b none: the slot is b's.
    a.connected(0, "h1", "");
    a.disconnected(0, crate::error::ErrorCode::Info, "closed", "");
    assert_eq!((cap.open(), cap.waiting()), (2, 1), "a waits again");
    // b's connection fails: the slot goes back to a.
    b.connect_failed(0, crate::error::ErrorCode::Socket, "", "", "refused");
    assert_eq!((cap.open(), cap.waiting()), (2, 0), "a holds both");
    b.destroy();
    a.destroy();
    assert_eq!((cap.open(), cap.waiting()), (0, 0), "every slot is back");
}

#[tokio::test]
async fn a_waiting_pool_has_an_idle_connection_of_another_closed() {
    let cap = ConnCap::new(1);
    let a = pool(&cap, 1..=1);
    a.connected(0, "h1", "");
    assert_eq!(take(&a, 0, 1), vec![1]);
    // Served: it waits idle for more.
    assert_eq!(take(&a, 0, 1), Vec::<u32>::new());
    assert!(!a.finished());
    let b = pool(&cap, 1..=1);
    assert_eq!(cap.waiting(), 1);
    assert!(a.finished(), "a's idle connection is told to end");
    assert!(!a.finished(), "only one");
    a.disconnected(0, crate::error::ErrorCode::Info, "closed", "");
    assert_eq!((cap.open(), cap.waiting()), (1, 0), "b has the slot");
    drop(b);
}

#[tokio::test]
async fn a_busy_connection_yields_its_slot_after_a_response_when_another_origin_waits() {
    let cap = ConnCap::new(1);
    let a = pool(&cap, 1..=3);
    a.connected(0, "h1", "");
    assert_eq!(take(&a, 0, 1), vec![1]);
    let b = pool(&cap, 1..=1);
    assert!(!a.finished(), "a's connection is busy");
    assert_eq!(take(&a, 0, 1), Vec::<u32>::new(), "b waits: a takes no more");
    assert!(a.finished(), "and ends");
    a.disconnected(0, crate::error::ErrorCode::Info, "closed", "");
    assert_eq!((cap.open(), cap.waiting()), (1, 1), "b has the slot, a waits");
    drop(b);
}

#[tokio::test]
async fn without_waiters_a_connection_keeps_serving_its_pool() {
    let cap = ConnCap::new(1);
    let a = pool(&cap, 1..=2);
    assert_eq!(take(&a, 0, 1), vec![1]);
    assert_eq!(take(&a, 0, 1), vec![2]);
    assert!(!a.finished());
}

//! Tests of the pool: admission, fan-out, requeue caps and the idle probe (split from pool.rs).
use super::*;
use crate::registry::EventSink;
use crate::request::flags;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Wake;

struct NullSink;
impl EventSink for NullSink {
    fn write(&self, write: &mut dyn FnMut(&mut crate::events::Batch)) -> bool {
        write(&mut Default::default());
        false
    }
    fn signal(&self) {}
    fn congested(&self, _: &Waker) -> bool {
        false
    }
}

/// Counts its wakes.
#[derive(Default)]
struct Wakes(AtomicUsize);
impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A connection that takes requests while `room` lasts and admits those `admit` allows.
struct Conn {
    room: usize,
    admit: fn(&Request) -> bool,
    took: Vec<u32>,
}
impl Taker for Conn {
    fn wants_more(&self) -> bool {
        self.took.len() < self.room
    }
    fn admits(&self, next: &Request) -> bool {
        (self.admit)(next)
    }
    fn submit(&mut self, req: Request) {
        self.took.push(req.id);
    }
}

fn pool() -> Arc<Pool> {
    Pool::for_test(Arc::new(NullSink))
}

fn queue(p: &Arc<Pool>, id: u32, f: u32) {
    p.dispatch(id, "GET\0/\0".into(), None, f, StreamLength::Chunked, None, None).unwrap();
}

fn take(
    p: &Pool,
    conn: u64,
    wakes: &Arc<Wakes>,
    room: usize,
    admit: fn(&Request) -> bool,
) -> Vec<u32> {
    let mut c = Conn { room, admit, took: Vec::new() };
    p.take(conn, &Waker::from(wakes.clone()), &mut c);
    c.took
}

#[tokio::test]
async fn take_hands_out_in_order_until_the_connection_refuses() {
    let p = pool();
    for id in 1..=4 {
        queue(&p, id, if id == 3 { 0 } else { flags::IDEMPOTENT });
    }
    let (a, b) = (Arc::new(Wakes::default()), Arc::new(Wakes::default()));
    // Connection 2 has nothing to do yet: it waits for work.
    assert_eq!(take(&p, 2, &b, 0, |_| true), Vec::<u32>::new());
    let idempotent = |r: &Request| r.has(flags::IDEMPOTENT);
    assert_eq!(take(&p, 2, &b, 1, |_| false), Vec::<u32>::new());
    assert_eq!(b.0.load(Ordering::SeqCst), 0);
    p.state.lock().waiting.push((2, Waker::from(b.clone())));
    assert_eq!(take(&p, 1, &a, 8, idempotent), vec![1, 2]);
    // Request 3 is refused: it stays first in line, and the waiting connection is woken for it.
    assert_eq!(b.0.load(Ordering::SeqCst), 1);
    assert_eq!(p.stats().queued, 2);
    assert_eq!(take(&p, 2, &b, 8, |_| true), vec![3, 4]);
}

#[tokio::test]
async fn aborted_requests_are_dropped_on_the_way_and_an_empty_queue_parks_the_connection() {
    let p = pool();
    queue(&p, 1, flags::IDEMPOTENT);
    queue(&p, 2, flags::IDEMPOTENT);
    p.shared.ctl(1).unwrap().abort();
    let w = Arc::new(Wakes::default());
    assert_eq!(take(&p, 7, &w, 8, |_| true), vec![2]);
    assert!(p.shared.ctl(1).is_none(), "the aborted request is forgotten");
    // It took work this round, so it is not parked (it asks again once it has polled); asking
    // with the queue dry parks it until work arrives.
    assert!(p.state.lock().waiting.is_empty());
    assert_eq!(take(&p, 7, &w, 8, |_| true), Vec::<u32>::new());
    assert_eq!(p.state.lock().waiting.iter().filter(|(id, _)| *id == 7).count(), 1);
    p.dispatch(3, "GET\0/\0".into(), None, 0, StreamLength::Chunked, None, None).unwrap();
    p.kick();
    assert_eq!(w.0.load(Ordering::SeqCst), 1, "new work wakes the parked connection");
}

/// A request a connection hands back, re-sent `retries` times so far.
fn back(id: u32, retries: u8) -> Request {
    Request {
        id,
        head: "GET\0/".into(),
        body: None,
        stream_length: StreamLength::Chunked,
        flags: flags::IDEMPOTENT,
        limits: Limits::default(),
        ctl: Arc::default(),
        retries,
    }
}

#[tokio::test]
async fn requeued_requests_go_first_in_order_with_a_retry_counted() {
    let p = pool();
    for id in 1..=3 {
        queue(&p, id, flags::IDEMPOTENT);
    }
    let w = Arc::new(Wakes::default());
    assert_eq!(take(&p, 1, &w, 2, |_| true), vec![1, 2]);
    assert!(p.requeue(vec![back(1, 0), back(2, 0)], Resend::Lost).is_empty());
    let st = p.state.lock();
    let q: Vec<(u32, u8)> = st.queue.iter().map(|r| (r.id, r.retries)).collect();
    assert_eq!(q, vec![(1, 1), (2, 1), (3, 0)]);
}

#[tokio::test]
async fn requeue_hands_back_what_its_reason_allows_no_more() {
    let p = pool();
    let ids = |reqs: Vec<Request>| reqs.iter().map(|r| r.id).collect::<Vec<_>>();
    let over = p.requeue(vec![back(1, 0), back(2, MAX_RESENDS_REFUSED)], Resend::Refused);
    assert_eq!(ids(over), vec![2], "refused once already");
    let over = p.requeue(vec![back(3, 2), back(4, MAX_RESENDS_LOST)], Resend::Lost);
    assert_eq!(ids(over), vec![4], "lost three times already");
    let q: Vec<(u32, u8)> = p.state.lock().queue.iter().map(|r| (r.id, r.retries)).collect();
    assert_eq!(q, vec![(3, 3), (1, 1)]);
}

#[tokio::test]
async fn a_connection_full_before_the_queue_ran_out_passes_the_wake_on() {
    let p = pool();
    for id in 1..=3 {
        queue(&p, id, flags::IDEMPOTENT);
    }
    let (a, b) = (Arc::new(Wakes::default()), Arc::new(Wakes::default()));
    p.state.lock().waiting.push((2, Waker::from(b.clone())));
    assert_eq!(take(&p, 1, &a, 1, |_| true), vec![1]);
    assert_eq!(b.0.load(Ordering::SeqCst), 1, "the waiting connection is woken for the rest");
    assert_eq!(take(&p, 2, &b, 8, |_| true), vec![2, 3]);
    // Room for exactly what was queued: nobody else is woken.
    queue(&p, 4, flags::IDEMPOTENT);
    p.state.lock().waiting.push((3, Waker::from(a.clone())));
    assert_eq!(take(&p, 2, &b, 1, |_| true), vec![4]);
    assert_eq!(a.0.load(Ordering::SeqCst), 0);
}

/// A pool of up to 10 connections whose connections may speak h2, with `n` requests queued
/// and flushed. Nothing is awaited, so the connection tasks it spawns never run.
/// (connections alive, the probing connection), read under one lock.
fn probe_state(p: &Pool) -> (usize, Option<u64>) {
    let st = p.state.lock();
    (st.live, st.probe)
}

fn probing_pool(n: u32) -> Arc<Pool> {
    let shared = Shared::new(tokio::runtime::Handle::current(), Arc::new(NullSink), None);
    let mut opts =
        PoolOptions::basic(crate::transport::Target::Tcp { host: "127.0.0.1".into(), port: 9 });
    opts.connections = 10;
    opts.h2.probe_protocol = true;
    let p = Pool::new(1, opts, shared);
    for id in 1..=n {
        queue(&p, id, flags::IDEMPOTENT);
    }
    p.flush();
    p
}

#[tokio::test]
async fn the_first_connection_chooses_its_protocol_before_others_open() {
    let p = probing_pool(6);
    assert_eq!(probe_state(&p), (1, Some(0)), "one connection probes");
    p.flush();
    p.kick();
    assert_eq!(p.state.lock().live, 1, "nothing else opens while it does");
    // HTTP/1.1: the burst fans out, one request being the probe's own.
    p.connected(0, "h1", "");
    assert_eq!(probe_state(&p), (6, None));

    let p = probing_pool(6);
    // h2: nothing more opens; the session takes the burst itself.
    p.connected(0, "h2", "");
    assert_eq!(probe_state(&p), (1, None));
    // Full, it asks for another connection, which probes in turn.
    p.kick();
    assert_eq!(probe_state(&p), (2, Some(1)));
}

#[tokio::test]
async fn a_probe_that_fails_to_connect_lets_the_next_one_open() {
    let p = probing_pool(2);
    p.state.lock().connected = 1; // another connection is up, so the queue is not failed
    p.connect_failed(0, ErrorCode::Socket, "", "", "refused");
    assert_eq!(p.state.lock().probe, None);
    p.kick();
    assert_eq!(probe_state(&p), (1, Some(1)));
}

#[tokio::test]
async fn a_connect_given_up_fails_nothing_and_the_queue_gets_a_new_connection() {
    let p = probing_pool(1);
    assert_eq!(probe_state(&p), (1, Some(0)));
    p.connect_failed(0, ErrorCode::Info, "", "", "no request waits for this connection");
    assert_eq!(p.stats().queued, 1, "the request queued meanwhile is not failed");
    assert_eq!(probe_state(&p), (1, Some(1)), "a new connection opens for it");
}

#[tokio::test]
async fn attempts_are_told_to_give_up_only_when_no_live_request_is_queued() {
    // A connection attempt played by hand (no task runs here).
    let p = pool();
    queue(&p, 1, flags::IDEMPOTENT);
    let give_up = Arc::new(Notify::new());
    p.state.lock().connecting.insert(0, give_up.clone());
    let told = || async {
        tokio::time::timeout(Duration::from_millis(1), give_up.notified()).await.is_ok()
    };
    p.cancel_unused();
    assert!(!told().await, "request 1 still waits");
    p.shared.ctl(1).unwrap().abort();
    p.cancel_unused();
    assert!(told().await);
}

#[tokio::test]
async fn a_destroyed_pool_hands_out_nothing() {
    let p = pool();
    queue(&p, 1, flags::IDEMPOTENT);
    p.destroy();
    let w = Arc::new(Wakes::default());
    assert_eq!(take(&p, 1, &w, 8, |_| true), Vec::<u32>::new());
    assert!(ConnOwner::finished(&*p) && ConnOwner::destroyed(&*p));
}

//! The HTTP/1.1 session over a real loopback socket, polled by hand so each test decides what the
//! reactor has seen and what was read before a request went out: responses nobody asked for on a
//! kept-alive connection (issue 28, item 11) must never reach the next request.
use super::{End, Http1};
use crate::error::ErrorCode;
use crate::events;
use crate::options::PoolOptions;
use crate::owner::{ConnOwner, Resend, Taker};
use crate::registry::Shared;
use crate::request::{flags, Head, ReqCtl, Request, StreamLength};
use crate::test_events::Events;
use crate::transport::{Target, Transport};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

const STRAY: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\nx-stray: 1\r\n\r\nPOISON";

/// A pool reduced to a plain queue, which records what its connection hands back.
struct Owner {
    opts: PoolOptions,
    shared: Arc<Shared>,
    queue: Mutex<VecDeque<Request>>,
    requeued: Mutex<Vec<u32>>,
    ended: Mutex<Option<(ErrorCode, String)>>,
}

impl ConnOwner for Owner {
    fn id(&self) -> u32 {
        1
    }
    fn opts(&self) -> &PoolOptions {
        &self.opts
    }
    fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
    fn take(&self, _conn: u64, _waker: &Waker, taker: &mut dyn Taker) {
        let mut q = self.queue.lock();
        while taker.wants_more() && q.front().is_some_and(|next| taker.admits(next)) {
            taker.submit(q.pop_front().expect("front exists"));
        }
    }
    /// Takes every request back (no cap: these tests send each request once).
    fn requeue(&self, reqs: Vec<Request>, _: Resend) -> Vec<Request> {
        self.requeued.lock().extend(reqs.iter().map(|r| r.id));
        self.shared.emit(|w| {
            for r in &reqs {
                w.empty(events::RETRY, r.id);
            }
        });
        let mut q = self.queue.lock();
        for r in reqs.into_iter().rev() {
            q.push_front(r);
        }
        Vec::new()
    }
    fn kick(&self) {}
    fn finished(&self) -> bool {
        false
    }
    fn destroyed(&self) -> bool {
        false
    }
    fn connecting(&self) {}
    fn connected(&self, _: u64, _: &str, _: &str) {}
    fn connect_failed(&self, _: u64, _: ErrorCode, _: &str, _: &str, _: &str) {}
    fn detached(&self, _: u64) {}
    fn disconnected(&self, _: u64, code: ErrorCode, msg: &str, _: &str) {
        *self.ended.lock() = Some((code, msg.to_string()));
    }
}

impl Owner {
    fn queue(&self, id: u32, path: &str) {
        self.queue.lock().push_back(Request {
            id,
            head: Head::parse(format!("GET\0{path}\0host\0t\0").into_bytes()).unwrap(),
            body: None,
            stream_length: StreamLength::Chunked,
            flags: flags::IDEMPOTENT,
            limits: Default::default(),
            ctl: Arc::new(ReqCtl::default()),
            retries: 0,
        });
    }
    fn queued(&self) -> Vec<u32> {
        self.queue.lock().iter().map(|r| r.id).collect()
    }
}

/// A session on a fresh loopback connection, the server's end of it, and a second handle on the
/// client's socket to see what the kernel holds for it without going through the reactor.
struct Rig {
    owner: Arc<Owner>,
    events: Arc<Events>,
    session: Http1,
    server: TcpStream,
    client: TcpStream,
}

fn rig(pipelining: usize) -> Rig {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (server, _) = listener.accept().unwrap();
    server.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    client.set_nonblocking(true).unwrap();
    let peek = client.try_clone().unwrap();
    let io = Transport::Tcp(tokio::net::TcpStream::from_std(client).unwrap());
    let events = Arc::new(Events::default());
    let mut opts = PoolOptions::basic(Target::Tcp { host: "127.0.0.1".into(), port: 9 });
    opts.pipelining = pipelining;
    let owner = Arc::new(Owner {
        shared: Shared::new(tokio::runtime::Handle::current(), events.clone(), None),
        opts,
        queue: Mutex::default(),
        requeued: Mutex::default(),
        ended: Mutex::default(),
    });
    let session = Http1::new(owner.clone(), 1, io, "a|b|c|d".into());
    Rig { owner, events, session, server, client: peek }
}

impl Rig {
    /// One poll of the session, with no reactor turn before it.
    fn step(&mut self) -> Poll<End> {
        self.session.poll(&mut Context::from_waker(Waker::noop()))
    }

    /// Polls, letting the reactor turn in between, until `done` holds (None) or the session ends.
    async fn drive(&mut self, done: impl Fn(&Rig) -> bool) -> Option<End> {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            if let Poll::Ready(end) = self.step() {
                return Some(end);
            }
            if done(self) {
                return None;
            }
            assert!(Instant::now() < deadline, "the session made no progress");
            tokio::task::yield_now().await;
        }
    }

    /// Reads one request head on the server's side.
    fn request_head(&mut self) -> String {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            self.server.read_exact(&mut byte).expect("a request arrives");
            head.push(byte[0]);
        }
        String::from_utf8(head).unwrap()
    }

    /// The server writes `bytes`; returns once the kernel holds them for the client.
    fn send(&mut self, bytes: &[u8]) {
        self.server.write_all(bytes).unwrap();
        let deadline = Instant::now() + Duration::from_secs(2);
        while matches!(self.client.peek(&mut [0u8; 1]), Err(e) if e.kind() == ErrorKind::WouldBlock)
        {
            assert!(Instant::now() < deadline, "the bytes never arrived");
            std::thread::yield_now();
        }
    }

    /// Nothing more has reached the server.
    fn server_got_nothing(&self) -> bool {
        self.server.set_nonblocking(true).unwrap();
        let none =
            matches!(self.server.peek(&mut [0u8; 1]), Err(e) if e.kind() == ErrorKind::WouldBlock);
        self.server.set_nonblocking(false).unwrap();
        none
    }

    /// Request 1 goes out (the reactor has to report a new socket writable first).
    async fn send_first(&mut self) {
        self.owner.queue(1, "/1");
        assert!(self
            .drive(|r| r.session.bufs.wbuf.is_empty() && r.owner.queued().is_empty())
            .await
            .is_none());
        assert!(self.request_head().starts_with("GET /1 "));
    }

    /// Request 1 answered: the connection is kept alive and idle, its socket drained.
    async fn first_exchange(&mut self) {
        self.send_first().await;
        self.send(b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\none");
        assert!(self.drive(|r| r.events.find(events::END, 1).is_some()).await.is_none());
    }

    /// Ends the session (as the connection task does) and returns what the pool heard.
    fn finish(&mut self, end: End) -> (ErrorCode, String) {
        self.session.finish(&end);
        self.owner.ended.lock().clone().expect("the pool heard the end")
    }
}

#[tokio::test]
async fn a_stray_response_the_reactor_has_not_reported_keeps_the_next_request_off_the_connection() {
    let mut r = rig(1);
    r.first_exchange().await;
    // The stray is in the kernel, but no reactor turn came since the socket was last drained: the
    // session's own read cannot see it yet, as when it lands in the same turn as the request.
    r.send(STRAY);
    r.owner.queue(2, "/2");
    assert!(r.step().is_pending());
    assert_eq!(r.owner.queued(), vec![2], "the request waits instead of being written");
    assert!(r.server_got_nothing());
    let end = r.drive(|_| false).await.expect("the session ends");
    let (code, msg) = r.finish(end);
    assert_eq!((code, msg.as_str()), (ErrorCode::Socket, "bad response"));
    assert_eq!(r.owner.queued(), vec![2], "still queued, for a fresh connection");
    assert!(r.events.kinds(2).is_empty(), "nothing reached request 2: {:?}", r.events.kinds(2));
}

#[tokio::test]
async fn an_empty_line_on_an_idle_connection_only_delays_the_next_request() {
    let mut r = rig(1);
    r.first_exchange().await;
    // RFC 9112 §2.2 lets a server send an empty line after a response: read, skipped, harmless.
    r.send(b"\r\n");
    r.owner.queue(2, "/2");
    assert!(r.step().is_pending());
    assert_eq!(r.owner.queued(), vec![2]);
    assert!(r.drive(|r| r.owner.queued().is_empty()).await.is_none());
    assert!(r.request_head().starts_with("GET /2 "), "it went out on the same connection");
    r.send(b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\ntwo");
    assert!(r.drive(|r| r.events.find(events::END, 2).is_some()).await.is_none());
}

#[tokio::test]
async fn a_response_read_before_its_request_went_out_never_answers_it() {
    // Pipelining: request 2 joins while request 1's response sits read but undecoded (JS paused
    // it between the read and the decode), a stray response right behind it.
    let mut r = rig(2);
    r.send_first().await;
    r.send(&[b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\none".as_slice(), STRAY].concat());
    let front = r.session.pipe.inflight.front().unwrap().req.ctl.clone();
    front.pause();
    let cx = &mut Context::from_waker(Waker::noop());
    // The reactor reports the bytes after a turn or two.
    while !matches!(r.session.read(cx), Ok(true)) {
        tokio::task::yield_now().await;
    }
    assert!(r.session.undecoded && !r.session.bufs.rbuf.is_empty(), "read, not decoded");
    r.owner.queue(2, "/2");
    assert!(r.step().is_pending());
    assert!(r.request_head().starts_with("GET /2 "), "request 2 went out behind request 1");
    front.resume();
    let end = r.drive(|r| r.events.find(events::HEAD, 2).is_some()).await;
    assert!(r.events.find(events::HEAD, 2).is_none(), "request 2 was answered by the stray");
    let end = end.expect("the session ends");
    assert!(r.events.find(events::END, 1).is_some(), "request 1 got its response");
    let (code, msg) = r.finish(end);
    assert_eq!((code, msg.as_str()), (ErrorCode::Socket, "bad response"));
    assert_eq!(r.events.kinds(2), vec![events::RETRY], "request 2 saw no response, only its retry");
    assert_eq!(*r.owner.requeued.lock(), vec![2]);
}

//! Invariant checks on the HTTP/2 client session driven by arbitrary server bytes, shared by the
//! fuzz target `h2_session` (`fuzz/`, feature `fuzzing`) and the tests below: the session runs
//! over an in-memory socket whose reads are the fuzz input and whose writes go nowhere, with a
//! queue standing in for the pool. Each check panics when an invariant is violated, which AFL
//! records as a crash and `cargo test` as a failure; a session that never ends is AFL's hang.
use super::session::run;
use crate::error::ErrorCode;
use crate::events::{self, Batch};
use crate::options::PoolOptions;
use crate::owner::{ConnOwner, Resend, Taker};
use crate::pieces;
use crate::registry::{EventSink, Shared};
use crate::request::{flags, Head, ReqCtl, Request, StreamLength};
use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The response-size limit a config bit sets: small, so the fuzzer reaches it.
const MAX_RESPONSE: u64 = 64;

/// What the server bytes are for: requests and pool settings, from the input's config byte.
#[derive(Clone, Copy)]
struct Setup {
    /// 1 to 3 requests (streams 1, 3, 5).
    requests: u32,
    /// The first request is a HEAD.
    head_first: bool,
    /// Requests carry a 5-byte body (flow control on the send side).
    body: bool,
    /// Requests with a body send `expect: 100-continue` and hold it for the 100.
    expect: bool,
    /// maxResponseSize of MAX_RESPONSE.
    limit: bool,
    /// Requests are paused from the start and resumed when the socket reaches end of file (JS
    /// resuming as the connection ends).
    paused: bool,
    /// The pool is closing: the session ends once its streams do.
    closing: bool,
}

impl Setup {
    fn from_byte(cfg: u8) -> Setup {
        Setup {
            requests: 1 + u32::from(cfg & 3) % 3,
            head_first: cfg & 4 != 0,
            body: cfg & 8 != 0,
            expect: cfg & 16 != 0,
            limit: cfg & 32 != 0,
            paused: cfg & 64 != 0,
            closing: cfg & 128 != 0,
        }
    }

    fn id(i: u32) -> u32 {
        10 + i
    }
}

/// One recorded event: (kind, id, payload).
type Recorded = (u8, u32, Vec<u8>);

/// Records every event, or keeps none (for measuring the session's own memory).
struct Events(Option<Mutex<Vec<Recorded>>>);
impl EventSink for Events {
    fn write(&self, write: &mut dyn FnMut(&mut Batch)) -> bool {
        let mut batch = Batch::default();
        write(&mut batch);
        let Some(all) = &self.0 else { return false };
        let mut own = batch.own().iter();
        for f in events::frames(&batch.bytes) {
            let (kind, payload) = match f.kind {
                events::DATA_OWN => {
                    (events::DATA, own.next().expect("DATA_OWN has its bytes").to_vec())
                }
                k => (k, f.payload.to_vec()),
            };
            all.lock().push((kind, f.id, payload));
        }
        false
    }
    fn signal(&self) {}
    fn congested(&self, _: &Waker) -> bool {
        false
    }
}

/// The pool's side of the session: a plain queue. A request handed back goes to the end of the
/// queue (a new session would take it); nothing dials.
struct Owner {
    opts: PoolOptions,
    shared: Arc<Shared>,
    closing: bool,
    queue: Mutex<VecDeque<Request>>,
    waiting: Mutex<Option<Waker>>,
    /// connected, connect_failed, disconnected: how often each was called.
    calls: Mutex<[u32; 3]>,
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
    fn take(&self, _conn: u64, waker: &Waker, taker: &mut dyn Taker) {
        let mut q = self.queue.lock();
        while taker.wants_more() {
            match q.front() {
                Some(next) if taker.admits(next) => {
                    taker.submit(q.pop_front().expect("front exists"))
                }
                Some(_) => break,
                None => {
                    *self.waiting.lock() = Some(waker.clone());
                    break;
                }
            }
        }
    }
    /// As the pool's: RETRY for each request `why`'s cap allows, the others handed back.
    fn requeue(&self, reqs: Vec<Request>, why: Resend) -> Vec<Request> {
        let (again, over): (Vec<Request>, Vec<Request>) =
            reqs.into_iter().partition(|r| r.retries < why.cap());
        self.shared.emit(|w| {
            for r in &again {
                w.empty(events::RETRY, r.id);
            }
        });
        let mut q = self.queue.lock();
        for mut r in again.into_iter().rev() {
            r.retries += 1;
            q.push_front(r);
        }
        over
    }
    fn kick(&self) {
        if let Some(w) = self.waiting.lock().take() {
            w.wake();
        }
    }
    fn finished(&self) -> bool {
        self.closing && self.queue.lock().is_empty()
    }
    fn destroyed(&self) -> bool {
        false
    }
    fn connecting(&self) {}
    fn connected(&self, _: u64, version: &str, _: &str) {
        assert_eq!(version, "h2");
        self.calls.lock()[0] += 1;
    }
    fn connect_failed(&self, _: u64, _: ErrorCode, _: &str, _: &str, _: &str) {
        self.calls.lock()[1] += 1;
    }
    fn detached(&self, _: u64) {
        panic!("an h2 session never becomes a tunnel");
    }
    fn disconnected(&self, _: u64, _: ErrorCode, _: &str, _: &str) {
        self.calls.lock()[2] += 1;
    }
}

/// The server's end of the socket: reads return `pieces` one at a time, each after its turns of
/// the runtime (so the session and its streams run between pieces), then end of file. Writes are
/// taken whole.
struct Socket {
    /// Bytes, and the turns to wait before reading them.
    pieces: Vec<(Bytes, u32)>,
    next: usize,
    /// Bytes of `pieces[next]` already read.
    offset: usize,
    /// Turns still to wait before the next read.
    yields: u32,
    /// Paused requests, resumed on reaching end of file.
    resume_at_eof: Vec<Arc<ReqCtl>>,
}

/// Turns of the runtime before a frame's first byte arrives: enough for the session to open its
/// streams in between, so a server's answer does not overtake the request, as over a real socket.
const TURNS_PER_FRAME: u32 = 4;

/// The server's bytes frame by frame (cut where the frame headers' lengths say), each frame in
/// pieces cut by `seed`; a frame waits `TURNS_PER_FRAME`, a piece within it one turn.
fn pieces(stream: &[u8], seed: u8) -> Vec<(Bytes, u32)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let head = &stream[at..stream.len().min(at + 9)];
        let len = head.len()
            + if head.len() == 9 {
                (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2])
            } else {
                0
            };
        let frame = &stream[at..stream.len().min(at + len)];
        for (i, p) in pieces::split(frame, seed).into_iter().enumerate() {
            out.push((Bytes::copy_from_slice(p), if i == 0 { TURNS_PER_FRAME } else { 1 }));
        }
        at += frame.len();
    }
    out
}

impl AsyncRead for Socket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let s = &mut *self;
        if s.yields > 0 {
            s.yields -= 1;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let Some((piece, _)) = s.pieces.get(s.next) else {
            for ctl in s.resume_at_eof.drain(..) {
                ctl.resume();
            }
            return Poll::Ready(Ok(()));
        };
        let n = (piece.len() - s.offset).min(buf.remaining());
        buf.put_slice(&piece[s.offset..s.offset + n]);
        s.offset += n;
        if s.offset == piece.len() {
            s.next += 1;
            s.offset = 0;
            s.yields = s.pieces.get(s.next).map_or(0, |(_, turns)| *turns);
        }
        Poll::Ready(Ok(()))
    }
}

/// A connection can end before its bytes run out (a frame h2 refuses): JS resumes then too, as
/// it would on `disconnect`; a paused stream otherwise holds its session until JS resumes.
impl Drop for Socket {
    fn drop(&mut self) {
        for ctl in self.resume_at_eof.drain(..) {
            ctl.resume();
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// What one session left: its events (when recorded), the owner's calls, the ids still queued.
struct Ran {
    events: Vec<Recorded>,
    calls: [u32; 3],
    queued: Vec<u32>,
}

/// Runs a session on a runtime of its own over the server's bytes in `pieces`, to its end.
fn session(setup: Setup, pieces: Vec<(Bytes, u32)>, record: bool) -> Ran {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime starts");
    rt.block_on(async move {
        let sink = Arc::new(Events(record.then(Mutex::default)));
        let mut opts = PoolOptions::basic(crate::transport::Target::Tcp {
            host: "example.test".into(),
            port: 443,
        });
        opts.max_response_size = setup.limit.then_some(MAX_RESPONSE);
        let shared = Shared::new(tokio::runtime::Handle::current(), sink.clone(), None);
        let (mut queue, mut resume_at_eof) = (VecDeque::new(), Vec::new());
        for i in 0..setup.requests {
            let id = Setup::id(i);
            let ctl = shared.register(id);
            if setup.paused {
                ctl.pause();
                resume_at_eof.push(ctl.clone());
            }
            let method = if i == 0 && setup.head_first { "HEAD" } else { "GET" };
            let body = setup.body.then(|| b"hello".to_vec());
            let expect = if setup.body && setup.expect { flags::EXPECT_CONTINUE } else { 0 };
            let head = Head::parse(format!("{method}\0/{i}\0accept\0*/*\0").into_bytes()).unwrap();
            queue.push_back(Request {
                id,
                head,
                body,
                stream_length: StreamLength::Chunked,
                flags: expect,
                // The pool copies its limits into each request it queues; this harness queues by hand.
                limits: crate::request::Limits {
                    max_response_size: opts.max_response_size,
                    ..Default::default()
                },
                ctl,
                retries: 0,
            });
        }
        let owner = Arc::new(Owner {
            opts,
            shared,
            closing: setup.closing,
            queue: Mutex::new(queue),
            waiting: Mutex::new(None),
            calls: Mutex::new([0; 3]),
        });
        let yields = pieces.first().map_or(0, |(_, turns)| *turns);
        let socket = Socket { pieces, next: 0, offset: 0, yields, resume_at_eof };
        run(owner.clone(), 0, socket, "a|b".into()).await;
        let events = sink.0.as_ref().map(|m| std::mem::take(&mut *m.lock())).unwrap_or_default();
        let calls = *owner.calls.lock();
        let queued = owner.queue.lock().iter().map(|r| r.id).collect();
        Ran { events, calls, queued }
    })
}

/// Status and content-length of a HEAD event's payload (see `events.rs` for the layout).
fn parse_head(p: &[u8]) -> (u16, Option<u64>) {
    let u16_at = |at: usize| usize::from(u16::from_le_bytes([p[at], p[at + 1]]));
    let status = u16_at(0) as u16;
    let mut at = 4 + u16_at(2);
    let count = u16_at(at);
    at += 2;
    let mut length = None;
    for _ in 0..count {
        let n = u16_at(at);
        at += 2;
        let name = if n & 0x8000 != 0 {
            crate::header_names::KNOWN[n & 0x7FFF].as_bytes()
        } else {
            at += n;
            &p[at - n..at]
        };
        let v = u32::from_le_bytes(p[at..at + 4].try_into().unwrap()) as usize;
        at += 4 + v;
        if length.is_none() && name.eq_ignore_ascii_case(b"content-length") {
            length = std::str::from_utf8(&p[at - v..at]).ok().and_then(|s| s.parse().ok());
        }
    }
    // The fields are followed by the request's six f64 timings (`events.rs`).
    assert_eq!(at + 6 * 8, p.len(), "HEAD payload length");
    (status, length)
}

/// Where one request stands in its events.
#[derive(Debug)]
enum Phase {
    /// No final head yet; `informational`: 1xx heads since it was (re)sent.
    Waiting {
        informational: u32,
    },
    Body {
        length: Option<u64>,
        got: u64,
        head_method: bool,
    },
    Settled,
}

/// The events must follow each request's life: 1xx heads, one final head, its body, then END; or
/// ERROR at any point; or RETRY before any head, with the request back in the queue. Nothing
/// follows the end; every request ends or is queued again (never dropped); a body never exceeds
/// its content-length or the size limit, and an END means all of it came; a HEAD has no body.
fn check_events(setup: Setup, ran: &Ran, input: usize) {
    assert_eq!(ran.calls, [1, 0, 1], "connected, connect_failed, disconnected");
    let mut phases: HashMap<u32, Phase> =
        (0..setup.requests).map(|i| (Setup::id(i), Phase::Waiting { informational: 0 })).collect();
    let mut data = 0;
    for (kind, id, payload) in &ran.events {
        let phase =
            phases.get_mut(id).unwrap_or_else(|| panic!("event {kind} for unknown id {id}"));
        *phase = match (std::mem::replace(phase, Phase::Settled), *kind) {
            (Phase::Settled, _) => panic!("event {kind} for {id} after its end: {:?}", ran.events),
            (_, events::ERROR) => {
                let code = u16::from_le_bytes([payload[0], payload[1]]);
                assert_ne!(code, ErrorCode::Internal as u16, "a panic in the session");
                Phase::Settled
            }
            (Phase::Waiting { informational: 0 }, events::RETRY) => {
                Phase::Waiting { informational: 0 }
            }
            (Phase::Waiting { informational }, events::HEAD) => match parse_head(payload) {
                (status, _) if status < 200 => Phase::Waiting { informational: informational + 1 },
                (_, length) => {
                    let head_method = setup.head_first && *id == Setup::id(0);
                    Phase::Body { length, got: 0, head_method }
                }
            },
            (Phase::Body { length, got, head_method }, events::DATA) => {
                let got = got + payload.len() as u64;
                data += payload.len();
                assert!(!head_method, "a body for HEAD");
                assert!(
                    length.is_none_or(|n| got <= n),
                    "{got} bytes past content-length {length:?}"
                );
                assert!(!setup.limit || got <= MAX_RESPONSE, "{got} bytes past maxResponseSize");
                Phase::Body { length, got, head_method }
            }
            (Phase::Body { length, got, head_method }, events::END) => {
                assert!(
                    head_method || length.is_none_or(|n| got == n),
                    "END after {got} of {length:?} bytes"
                );
                Phase::Settled
            }
            (p, k) => panic!("event {k} for {id} in {p:?}"),
        };
    }
    assert!(data <= input, "{data} body bytes out of {input} bytes in");
    for (id, phase) in &phases {
        match phase {
            Phase::Settled => assert!(!ran.queued.contains(id), "{id} settled and queued"),
            Phase::Waiting { informational: 0 } => {
                assert!(ran.queued.contains(id), "{id} neither settled nor queued")
            }
            p => panic!("{id} left in {p:?}"),
        }
    }
}

/// Fuzz input: a config byte (see `Setup`), a split seed, then the server's bytes (from its
/// connection preface, a SETTINGS frame, on). The session must end once the bytes run out; its
/// events must keep each request's life (`check_events`); its memory must stay within a bound set
/// by the input's size, whatever the frames declare.
pub fn check_session(data: &[u8], probe: fn(&mut dyn FnMut()) -> usize) {
    let [cfg, seed, stream @ ..] = data else {
        return;
    };
    let setup = Setup::from_byte(*cfg);
    check_events(setup, &session(setup, pieces(stream, *seed), true), stream.len());
    let peak = probe(&mut || {
        session(setup, pieces(stream, *seed), false);
    });
    // The input (copied into pieces, read into h2's buffer),
    // the runtime and the session's fixed state: nothing in proportion to declared sizes.
    let bound = 4 * stream.len() + (2 << 20);
    assert!(peak <= bound, "{peak} bytes allocated, bound {bound}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pieces::Gen;

    const HEADERS: u8 = 1;
    const DATA: u8 = 0;
    const END_STREAM: u8 = 1;
    const END_HEADERS: u8 = 4;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend_from_slice(&[kind, flags]);
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    /// `:status 200` (static table entry 8) and a literal content-length without indexing.
    fn ok_head(length: &str) -> Vec<u8> {
        let mut h = vec![0x88, 0x0f, 0x0d, length.len() as u8];
        h.extend_from_slice(length.as_bytes());
        h
    }

    /// SETTINGS, then stream 1: head and "hello"; stream 3: 100, head and "hi" with trailers.
    fn server() -> Vec<u8> {
        let mut s = frame(4, 0, 0, &[]);
        s.extend(frame(HEADERS, END_HEADERS, 1, &ok_head("5")));
        s.extend(frame(HEADERS, END_HEADERS, 3, &[0x08, 0x03, b'1', b'0', b'0']));
        s.extend(frame(DATA, END_STREAM, 1, b"hello"));
        s.extend(frame(HEADERS, END_HEADERS, 3, &[0x88]));
        s.extend(frame(DATA, 0, 3, b"hi"));
        s.extend(frame(HEADERS, END_HEADERS | END_STREAM, 3, &[0x00, 0x01, b'x', 0x01, b'y']));
        s
    }

    fn no_probe(f: &mut dyn FnMut()) -> usize {
        f();
        0
    }

    #[test]
    fn a_served_exchange_settles_each_request() {
        let setup = Setup::from_byte(2);
        let stream = server();
        let ran = session(setup, pieces(&stream, 7), true);
        let kinds: Vec<(u8, u32)> = ran.events.iter().map(|(k, id, _)| (*k, *id)).collect();
        let of = |id| kinds.iter().filter(|(_, i)| *i == id).map(|(k, _)| *k).collect::<Vec<_>>();
        assert_eq!(of(10), [events::HEAD, events::DATA, events::END]);
        assert_eq!(of(11), [events::HEAD, events::HEAD, events::DATA, events::END]);
        // Stream 5 got nothing before the socket ended: the connection failed under it.
        assert_eq!(of(12), [events::ERROR]);
        check_events(setup, &ran, stream.len());
        check_session(&[2, 7].iter().copied().chain(stream).collect::<Vec<_>>(), no_probe);
    }

    #[test]
    fn paused_requests_are_resumed_when_the_connection_ends_before_the_bytes_do() {
        // A fuzzer hang (config 0xe9: two requests, paused): stream 1 reset, stream 3 answered
        // whole while paused, then a frame h2 refuses ends the connection before end of file.
        // Resumed only at end of file, stream 3 held its session forever; JS resumes on
        // `disconnect`, and so does the harness when the socket is dropped.
        let mut input = vec![0xe9, 0x5a];
        input.extend(frame(4, 0, 0, &[]));
        input.extend(frame(3, 0, 1, &[0, 0, 0, 8]));
        input.extend(frame(HEADERS, END_HEADERS | END_STREAM, 3, &[0x88]));
        input.extend([0xff, 0xe1, 0x01, 0x01, 0x05, 0x00, 0x00, 0x00, 0x05, 0x88]);
        let (done, wait) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            check_session(&input, no_probe);
            let _ = done.send(());
        });
        wait.recv_timeout(std::time::Duration::from_secs(5))
            .expect("the session ends instead of waiting forever");
    }

    #[test]
    fn mutated_server_bytes_keep_the_invariants() {
        let mut g = Gen(28);
        let base = server();
        for _ in 0..300 {
            let mut input = vec![g.u64() as u8, g.u64() as u8];
            input.extend_from_slice(&base[..g.upto(base.len())]);
            for _ in 0..g.upto(4) {
                let at = g.upto(input.len() - 1);
                input[at] = g.u64() as u8;
            }
            let tail = g.upto(40);
            input.extend(g.bytes(tail));
            check_session(&input, no_probe);
        }
    }
}

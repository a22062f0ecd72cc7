//! The WebSocket session over an in-memory socket (`tokio::io::duplex`): what the server sends
//! reaches JS as whole messages however the reads split it, the closing handshake runs in the
//! engine, JS's chunks go out as masked frames, and reading stops while JS is behind or while our
//! replies wait for a server that reads nothing.
use super::channel::{self, Channel};
use super::check::{client_frame, sf};
use super::frame;
use super::session::{run, REPLY_HIGH_WATER};
use super::start::Start;
use crate::conn::buffers::Buffers;
use crate::events::{self, Batch, Writer};
use crate::registry::{EventSink, Shared};
use crate::request::ReqCtl;
use crate::test_events::Events;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};

const ID: u32 = 7;

/// Records events; reports JS behind while `behind` is set, and wakes who asked once it is not.
#[derive(Default)]
struct Recorder {
    events: Events,
    behind: AtomicBool,
    waiting: Mutex<Vec<Waker>>,
}

impl EventSink for Recorder {
    fn write(&self, write: &mut dyn FnMut(&mut Batch)) -> bool {
        self.events.write(write)
    }
    fn signal(&self) {}
    fn congested(&self, waker: &Waker) -> bool {
        let behind = self.behind.load(Ordering::SeqCst);
        if behind {
            self.waiting.lock().push(waker.clone());
        }
        behind
    }
}

impl Recorder {
    /// JS caught up: the queue was taken.
    fn caught_up(&self) {
        self.behind.store(false, Ordering::SeqCst);
        for w in self.waiting.lock().drain(..) {
            w.wake();
        }
    }
}

struct Running {
    rec: Arc<Recorder>,
    ctl: Arc<ReqCtl>,
    /// The server's end of the socket.
    server: DuplexStream,
    task: tokio::task::JoinHandle<std::io::Result<&'static str>>,
}

fn start(stalled_write_ms: u64) -> Start {
    Start::new("", 1 << 20, 0, stalled_write_ms).unwrap()
}

/// A session over a socket whose buffers hold `capacity` bytes each way.
fn session(capacity: usize, start: Start, behind: bool) -> Running {
    let rec = Arc::new(Recorder::default());
    rec.behind.store(behind, Ordering::SeqCst);
    let shared = Shared::new(tokio::runtime::Handle::current(), rec.clone(), None);
    let ctl = shared.register(ID);
    let (client, server) = tokio::io::duplex(capacity);
    let task = tokio::spawn(run(shared, client, Buffers::new(), ID, ctl.clone(), start));
    Running { rec, ctl, server, task }
}

/// Lets the session run until nothing is left for it to do now.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

/// Whole client frames out of `bytes`: (opcode, unmasked payload).
fn client_frames(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let len = match bytes[1] & 0x7F {
            126 => 4 + u16::from_be_bytes([bytes[2], bytes[3]]) as usize,
            127 => 10 + u64::from_be_bytes(bytes[2..10].try_into().unwrap()) as usize,
            n => 2 + n as usize,
        } + 4;
        let (op, payload, _) = client_frame(&bytes[..len]);
        out.push((op, payload));
        bytes = &bytes[len..];
    }
    out
}

/// Reads what the client sent until it half-closes.
async fn read_to_end(server: &mut DuplexStream) -> Vec<(u8, Vec<u8>)> {
    let mut got = Vec::new();
    let read = server.read_to_end(&mut got);
    tokio::time::timeout(Duration::from_secs(2), read)
        .await
        .expect("the client half-closes")
        .unwrap();
    client_frames(&got)
}

/// Writes into `server` until its buffer is full (a write would wait); the bytes written.
fn fill(server: &mut DuplexStream, frame: &[u8]) -> usize {
    let mut cx = Context::from_waker(Waker::noop());
    let mut written = 0;
    loop {
        match std::pin::Pin::new(&mut *server).poll_write(&mut cx, frame) {
            Poll::Ready(Ok(n)) => written += n,
            Poll::Pending => return written,
            Poll::Ready(Err(e)) => panic!("{e}"),
        }
    }
}

/// A ping whose pong (131 bytes with header and mask) the client queues.
fn big_ping() -> Vec<u8> {
    sf(true, false, frame::PING, &[9u8; 125])
}

/// The server sends pings and reads nothing: the client's pongs fill its socket buffer, then its
/// write queue, and it stops reading. The bytes of pings it took.
async fn ping_until_it_stops_reading(server: &mut DuplexStream) -> usize {
    let ping = big_ping();
    let mut pings = 0;
    loop {
        let n = fill(server, &ping);
        pings += n;
        settle().await;
        if n == 0 {
            return pings;
        }
    }
}

fn close_payload(code: u16, reason: &str) -> Vec<u8> {
    let mut p = code.to_be_bytes().to_vec();
    p.extend_from_slice(reason.as_bytes());
    p
}

/// WS_CLOSE / WS_FAIL payloads: (code, reason).
fn status(p: &[u8]) -> (u16, String) {
    (u16::from_le_bytes([p[0], p[1]]), String::from_utf8(p[2..].to_vec()).unwrap())
}

#[tokio::test]
async fn a_message_split_across_reads_and_frames_arrives_whole() {
    let mut r = session(1 << 16, start(0), false);
    let mut stream = sf(false, false, frame::TEXT, b"hello ");
    stream.extend(sf(true, false, frame::CONTINUATION, b"world"));
    // Cut inside the first header, inside a payload and between the frames, each read apart.
    for piece in [&stream[..1], &stream[1..5], &stream[5..8], &stream[8..]] {
        r.server.write_all(piece).await.unwrap();
        settle().await;
    }
    assert_eq!(r.rec.events.until(events::WS_TEXT, ID).await.unwrap(), b"hello world");
    assert_eq!(r.rec.events.kinds(ID), vec![events::WS_TEXT], "one event, for the whole message");
}

#[tokio::test]
async fn a_frame_header_read_apart_from_its_payload_waits_for_it() {
    // As a server writing each frame's header and payload in two writes (Nagle off): a read that
    // ends after the header decodes nothing, and the session must read again, not spin on it.
    let mut r = session(1 << 16, start(0), false);
    for (i, text) in ["first", "second"].into_iter().enumerate() {
        let frame = sf(true, false, frame::TEXT, text.as_bytes());
        r.server.write_all(&frame[..2]).await.unwrap();
        settle().await;
        r.server.write_all(&frame[2..]).await.unwrap();
        let got = tokio::time::timeout(Duration::from_secs(2), async {
            loop {
                let texts: Vec<Vec<u8>> = r.rec.events.all(events::WS_TEXT, ID);
                if texts.len() > i {
                    return texts[i].clone();
                }
                tokio::task::yield_now().await;
            }
        });
        assert_eq!(got.await.expect("the message arrives"), text.as_bytes());
    }
}

#[tokio::test]
async fn a_close_during_a_partial_message_ends_it_without_the_message() {
    let mut r = session(1 << 16, start(0), false);
    let mut stream = sf(false, false, frame::BINARY, b"part");
    stream.extend(sf(true, false, frame::CLOSE, &close_payload(1001, "going away")));
    r.server.write_all(&stream).await.unwrap();
    let close = r.rec.events.until(events::WS_CLOSE, ID).await.unwrap();
    assert_eq!(status(&close), (1001, "going away".into()));
    // The engine answered with our close (the code echoed) and half-closed behind it.
    assert_eq!(
        read_to_end(&mut r.server).await,
        vec![(frame::CLOSE, 1001u16.to_be_bytes().to_vec())]
    );
    drop(r.server);
    assert_eq!(r.task.await.unwrap().unwrap(), "closed by the server");
    assert_eq!(r.rec.events.kinds(ID), vec![events::WS_CLOSE, events::END]);
}

#[tokio::test]
async fn pings_are_answered_and_reported() {
    let mut r = session(1 << 16, start(0), false);
    let mut stream = sf(true, false, frame::PING, b"p1");
    stream.extend(sf(true, false, frame::PONG, b"p2"));
    stream.extend(sf(true, false, frame::CLOSE, b""));
    r.server.write_all(&stream).await.unwrap();
    let got = read_to_end(&mut r.server).await;
    assert_eq!(got, vec![(frame::PONG, b"p1".to_vec()), (frame::CLOSE, Vec::new())]);
    let kinds = r.rec.events.kinds(ID);
    assert_eq!(kinds, vec![events::WS_PING, events::WS_PONG, events::WS_CLOSE]);
    assert_eq!(status(&r.rec.events.find(events::WS_CLOSE, ID).unwrap()), (0, String::new()));
}

#[tokio::test]
async fn chunks_from_js_go_out_as_masked_frames_and_a_drain_reports_what_was_taken() {
    let mut r = session(1 << 20, start(0), false);
    let chunk = |payload: &[u8], op: u8| [payload, &[op]].concat();
    let big = vec![5u8; 300 * 1024];
    assert!(r.ctl.push_body(chunk(b"hi", frame::TEXT)));
    assert!(!r.ctl.push_body(chunk(&big, frame::BINARY)), "past the pipe's high-water mark");
    r.ctl.push_body(chunk(b"are you there", frame::PING));
    r.ctl.push_body(chunk(&close_payload(1000, "done"), frame::CLOSE));
    r.ctl.push_body(chunk(b"after the close", frame::TEXT));
    let mut got = Vec::new();
    // Headers (2 bytes, 10 for the big one) and masks (4 bytes) around each payload.
    while got.len() < (6 + 2) + (14 + big.len()) + (6 + 13) + (6 + 6) {
        let mut buf = vec![0; 64 * 1024];
        let n = r.server.read(&mut buf).await.unwrap();
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(
        client_frames(&got),
        vec![
            (frame::TEXT, b"hi".to_vec()),
            (frame::BINARY, big.clone()),
            (frame::PING, b"are you there".to_vec()),
            (frame::CLOSE, close_payload(1000, "done")),
        ],
        "nothing after our close"
    );
    let taken = r.rec.events.until(events::BODY_DRAIN, ID).await.unwrap();
    let total = 3 + big.len() + 1 + 14 + 7 + 16;
    assert_eq!(u64::from_le_bytes(taken.try_into().unwrap()), total as u64);
    r.ctl.abort();
    assert_eq!(r.task.await.unwrap().unwrap(), "websocket closed");
    assert!(r.rec.events.find(events::END, ID).is_none(), "JS aborted it: no END");
}

#[tokio::test]
async fn reading_stops_while_js_is_behind() {
    let mut r = session(1 << 16, start(0), true);
    let message = sf(true, false, frame::BINARY, &[1u8; 1000]);
    // What the socket's buffer holds goes in; the session, told JS is behind, reads none of it.
    let written = fill(&mut r.server, &message);
    settle().await;
    assert!(written >= 1 << 16);
    assert_eq!(fill(&mut r.server, &message), 0, "nothing was read");
    assert!(r.rec.events.kinds(ID).is_empty());
    // JS took its queue: reading resumes and every message arrives.
    r.rec.caught_up();
    settle().await;
    let whole = written / message.len();
    let count = || r.rec.events.kinds(ID).iter().filter(|k| **k == events::WS_BINARY).count();
    assert_eq!(count(), whole);
}

#[tokio::test]
async fn a_server_that_reads_none_of_our_pongs_stops_reading_then_fails_the_connection() {
    let mut r = session(1 << 16, start(50), false);
    let pings = ping_until_it_stops_reading(&mut r.server).await;
    assert!(pings < 1 << 20, "the client stopped reading: {pings} bytes of pings taken");
    let fail = r.rec.events.until(events::WS_FAIL, ID).await.expect("fails once stalled");
    let (code, reason) = status(&fail);
    assert_eq!(code, 1008);
    let queued: usize = reason.split(' ').nth(3).unwrap().parse().unwrap();
    assert!(queued < 2 * REPLY_HIGH_WATER + 131, "{reason}");
    assert!(reason.ends_with("unread for 50 ms"), "{reason}");
    assert_eq!(r.task.await.unwrap().unwrap(), "stalled");
    assert_eq!(r.rec.events.kinds(ID).last(), Some(&events::END));
}

// Paused time needs tokio's `test-util`, which `test-hooks` turns on (`npm test` builds with it).
#[cfg(feature = "test-hooks")]
#[tokio::test(start_paused = true)]
async fn a_server_that_reads_our_pongs_slowly_is_not_failed_until_it_stops_reading() {
    // Paused time: the stall timer fires only when the test moves the clock.
    let stalled_write = Duration::from_millis(1000);
    let mut r = session(1 << 16, start(1000), false);
    ping_until_it_stops_reading(&mut r.server).await;
    // The server takes a few of our bytes every 0.7 s, for 6.3 s in all: each time the timer
    // fires (in a step's advance, before that step's read) it finds bytes sent since it was armed,
    // and is re-armed. So few bytes that the write queue stays past `REPLY_HIGH_WATER` throughout:
    // the session never unblocks, which would drop the timer and arm a fresh one at the next block.
    let mut buf = [0u8; 16];
    for step in 1..=9 {
        tokio::time::advance(stalled_write * 7 / 10).await;
        settle().await;
        assert_eq!(r.rec.events.find(events::WS_FAIL, ID), None, "failed at step {step}");
        assert!(r.server.read(&mut buf).await.unwrap() > 0);
        settle().await;
        assert_eq!(fill(&mut r.server, &big_ping()), 0, "still blocked at step {step}");
    }
    // It stops reading: the timer armed before the last read is re-armed once more, then fails.
    let last_read = tokio::time::Instant::now();
    let fail = r.rec.events.until(events::WS_FAIL, ID).await.expect("fails once stalled");
    let waited = last_read.elapsed();
    assert!(waited > stalled_write && waited <= 2 * stalled_write, "failed {waited:?} after");
    let (code, reason) = status(&fail);
    assert_eq!(code, 1008);
    let queued: usize = reason.split(' ').nth(3).unwrap().parse().unwrap();
    assert!(queued >= REPLY_HIGH_WATER, "blocked until the end: {reason}");
    assert_eq!(r.task.await.unwrap().unwrap(), "stalled");
}

#[test]
fn a_js_chunk_names_its_frame_by_its_last_byte() {
    let mut chan = Channel::new(ID, start(0).codec());
    let mut out = Vec::new();
    chan.send(b"x\x02".to_vec(), &mut out);
    chan.send(Vec::new(), &mut out);
    chan.send(b"y\x03".to_vec(), &mut out);
    chan.send([&[0u8; 126][..], &[frame::PING]].concat(), &mut out);
    assert_eq!(client_frames(&out), vec![(frame::BINARY, b"x".to_vec())], "the rest are dropped");
    // Feeding: events for the request, replies into the write queue.
    let mut batch = Batch::default();
    let fed =
        chan.feed(&sf(true, false, frame::PING, b"q"), &mut Writer::new(&mut batch), &mut out);
    assert_eq!((fed.took, fed.replied), (3, true));
    assert_eq!(client_frames(&out)[1], (frame::PONG, b"q".to_vec()));
    assert_eq!(batch.bytes[0], events::WS_PING);
}

#[test]
fn a_chunk_of_records_frames_each_in_order() {
    let mut chan = Channel::new(ID, start(0).codec());
    let mut out = Vec::new();
    let record = |op: u8, payload: &[u8]| {
        [&[op][..], &(payload.len() as u32).to_le_bytes(), payload].concat()
    };
    let mut chunk = [
        record(frame::TEXT, b"one"),
        record(frame::BINARY, b""),
        record(frame::PING, b"p"),
        record(0x3, b"dropped"),
        record(frame::BINARY, &[7; 300]),
        record(frame::CLOSE, &[0x03, 0xE8, b'b', b'y', b'e']),
        record(frame::BINARY, b"after the close"),
    ]
    .concat();
    // A record cut short (JS never writes one) ends the chunk.
    chunk.extend_from_slice(&[frame::BINARY, 9, 0, 0, 0, 1]);
    chunk.push(channel::RECORDS);
    chan.send(chunk, &mut out);
    assert_eq!(
        client_frames(&out),
        vec![
            (frame::TEXT, b"one".to_vec()),
            (frame::BINARY, Vec::new()),
            (frame::PING, b"p".to_vec()),
            (frame::BINARY, vec![7; 300]),
            (frame::CLOSE, vec![0x03, 0xE8, b'b', b'y', b'e']),
        ]
    );
}

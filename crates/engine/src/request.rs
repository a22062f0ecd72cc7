//! A request as the engine holds it, and the control block shared with the JS thread.
use crate::inbox::{store_waker, Inbox};
use crate::timings::Stamps;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

mod head;
pub mod rules;
pub use head::{Head, HeadError, Multiplexed};

/// Request flags, set by the JS side at dispatch.
pub mod flags {
    use crate::codes::code_consts;

    code_consts!(u32 {
        IDEMPOTENT = 1,
        /// No further pipelining on the connection until this request's headers arrived.
        BLOCKING = 2,
        /// Send `connection: close` and close the connection after the response.
        RESET = 4,
        UPGRADE = 8,
        /// The body arrives in pieces through the request's pipe (`ReqCtl::push_body`) after dispatch.
        STREAM_BODY = 16,
        /// JS watches this request (debug output or diagnostics channels): report SENT when its head
        /// is written. Unset, the request costs nothing extra.
        OBSERVE = 32,
        /// Send `expect: 100-continue` and hold the body until a 100 arrives (HTTP/2 only, as undici).
        EXPECT_CONTINUE = 64,
        /// A WebSocket handshake: from its 101 on the connection reads nothing until JS starts the
        /// engine's WebSocket session on it (`ReqCtl::start_websocket`) or resumes it as a tunnel.
        WEBSOCKET = 128,
    });
}

/// How a streamed body is framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamLength {
    Known(u64),
    Chunked,
}

pub struct Request {
    pub id: u32,
    /// Checked when JS dispatched it; each protocol writes it as it is.
    pub head: Head,
    pub body: Option<Vec<u8>>,
    /// For STREAM_BODY requests: Content-Length when known, chunked otherwise.
    pub stream_length: StreamLength,
    pub flags: u32,
    pub limits: Limits,
    pub ctl: Arc<ReqCtl>,
    /// How many times the request went back to the queue after its connection failed.
    pub retries: u8,
}

impl Request {
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// Whether the request can go again after a server turned it away unprocessed: a streamed
    /// body was consumed as it went (undici replays only bodies it holds whole).
    pub fn resendable(&self) -> bool {
        !self.has(flags::STREAM_BODY)
    }
}

/// The limits a request runs under, the same on every protocol: breaking one fails the request
/// with its `Breach`, whichever session carries it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// From when the request was all sent until its response head (`headersTimeout`).
    pub headers_timeout: Option<Duration>,
    /// Between two pieces of the response body (`bodyTimeout`).
    pub body_timeout: Option<Duration>,
    /// Most response body bytes (`maxResponseSize`).
    pub max_response_size: Option<u64>,
}

impl Limits {
    /// The response body has reached `received` bytes.
    pub fn check_received(&self, received: u64) -> Result<(), Breach> {
        match self.max_response_size {
            Some(max) if received > max => Err(Breach::ResponseTooLarge),
            _ => Ok(()),
        }
    }
}

/// A limit a request broke; `ErrorCode::from(breach)` is its error class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breach {
    HeadersTimeout,
    BodyTimeout,
    ResponseTooLarge,
    /// A streamed body's size differs from the Content-Length it declared.
    LengthMismatch,
}

impl Breach {
    /// undici's message for it, word for word.
    pub fn message(self) -> &'static str {
        match self {
            Breach::HeadersTimeout => "Headers Timeout Error",
            Breach::BodyTimeout => "Body Timeout Error",
            Breach::ResponseTooLarge => "Response content exceeded max size",
            Breach::LengthMismatch => "Request body length does not match content-length header",
        }
    }
}

const PAUSED: u8 = 1;
const ABORTED: u8 = 2;
/// A WebSocket handshake's connection waits for JS (`hold_for_websocket`).
const WS_HELD: u8 = 4;

/// Bytes JS wrote for a request (a streamed body, or what goes up an upgraded connection) that the
/// connection has not taken yet.
#[derive(Default)]
struct Pipe {
    inbox: Inbox,
    ended: bool,
    /// The body's source failed: what is queued still goes out, then the request is aborted.
    failed: bool,
}

/// Buffered bytes per request beyond which JS is asked to wait for a drain event.
pub const PIPE_HIGH_WATER: usize = 256 * 1024;

/// What the connection took from a pipe.
pub struct Taken {
    pub chunks: Vec<Vec<u8>>,
    pub ended: bool,
    /// The source failed after these chunks: write them, then abort (`ReqCtl::fail_body`).
    pub failed: bool,
    /// The pipe fell below the high-water mark after JS was told to wait: send it a drain event.
    pub drained: bool,
}

/// Pause / resume / abort requests from JS reach the connection task through this block: a flag
/// plus the waker of the task that owns the request.
#[derive(Default)]
pub struct ReqCtl {
    state: AtomicU8,
    waker: Mutex<Option<Waker>>,
    pipe: Mutex<Pipe>,
    /// How the WebSocket session runs, from JS once the handshake checked out (`ws::session`).
    websocket: Mutex<Option<crate::ws::start::Start>>,
    /// When each phase of the request ended (`timings.rs`).
    pub timings: Stamps,
}

impl ReqCtl {
    pub fn paused(&self) -> bool {
        self.state.load(Ordering::Acquire) & PAUSED != 0
    }
    pub fn aborted(&self) -> bool {
        self.state.load(Ordering::Acquire) & ABORTED != 0
    }
    pub fn pause(&self) {
        self.state.fetch_or(PAUSED, Ordering::AcqRel);
    }
    pub fn resume(&self) {
        self.state.fetch_and(!PAUSED, Ordering::AcqRel);
        self.wake();
    }
    pub fn abort(&self) {
        self.state.fetch_or(ABORTED, Ordering::AcqRel);
        self.wake();
    }
    /// Called by the owning task; a task's waker is stable, so once per request is enough.
    pub fn set_waker(&self, w: &Waker) {
        store_waker(&mut self.waker.lock(), w);
    }
    /// Queues bytes from JS (engine thread wakes to send them). False once JS should wait for a
    /// drain event before writing more.
    pub fn push_body(&self, chunk: Vec<u8>) -> bool {
        let below = self.queue_body(chunk);
        self.wake();
        below
    }

    /// As `push_body`, without waking the connection: `wake_for_body` follows once JS queued all
    /// it had (a WebSocket's messages of one JS tick: one wake, not one per message).
    pub fn queue_body(&self, chunk: Vec<u8>) -> bool {
        let mut p = self.pipe.lock();
        if p.ended {
            return true; // writes after end are dropped; JS guards against them
        }
        p.inbox.push(chunk, PIPE_HIGH_WATER)
    }

    pub fn wake_for_body(&self) {
        self.wake();
    }

    pub fn end_body(&self) {
        self.pipe.lock().ended = true;
        self.wake();
    }

    /// The body's source failed with some of it already given: the connection writes what it
    /// holds (as undici leaves what it wrote on the socket), then aborts the request, closing it.
    pub fn fail_body(&self) {
        self.pipe.lock().failed = true;
        self.wake();
    }

    /// Takes everything queued (the connection writes it out as a whole).
    pub fn take_body(&self) -> Taken {
        let mut p = self.pipe.lock();
        let chunks: Vec<Vec<u8>> = p.inbox.chunks.drain(..).collect();
        p.inbox.bytes = 0;
        let drained = std::mem::take(&mut p.inbox.drain_wanted);
        Taken { chunks, ended: p.ended, failed: p.failed, drained }
    }

    /// At a WebSocket handshake's 101 (`flags::WEBSOCKET`): nothing is read until JS starts the
    /// WebSocket session, or resumes the request to read it as a tunnel.
    pub fn hold_for_websocket(&self) {
        self.state.fetch_or(PAUSED | WS_HELD, Ordering::AcqRel);
    }
    pub fn held_for_websocket(&self) -> bool {
        self.state.load(Ordering::Acquire) & WS_HELD != 0
    }

    /// Starts the WebSocket session on this upgraded request's connection (`flags::WEBSOCKET`).
    pub fn start_websocket(&self, start: crate::ws::start::Start) {
        *self.websocket.lock() = Some(start);
        self.resume();
    }

    pub fn take_websocket(&self) -> Option<crate::ws::start::Start> {
        self.websocket.lock().take()
    }

    fn wake(&self) {
        if let Some(w) = self.waker.lock().as_ref() {
            w.wake_by_ref();
        }
    }
}

//! One connection task: drives the sans-IO codec over a transport, with the pipelining rules,
//! backpressure (pause stops reading), timeouts and keep-alive. Reads, writes, control flags and
//! timers are all handled in one hand-written `poll`, so a connection is a single task and a single
//! wake-up serves everything that became ready.
use crate::owner::{ConnOwner, Taker};
use crate::registry::{EventSink, Shared};
use crate::error::{errno_name, ErrorCode};
use crate::events::{self, Writer};
use crate::h1::{encode::encode_chunk, encode::LAST_CHUNK, encode_request_head, BodyFraming, Decoded, Expect, ResponseDecoder};
use crate::request::{flags, ReqCtl, Request, StreamLength};
use crate::transport::{bridge, ConnectError, Transport};
use bytes::BytesMut;
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

const READ_CHUNK: usize = 64 * 1024;
/// Rounds of read/write work per poll before yielding to other connections.
const BUDGET: usize = 16;
/// How often one request may be re-sent after connections failed under it.
const MAX_RETRIES: u8 = 3;

/// Debug builds only: a request for this path makes its connection task panic when the response
/// head arrives, so tests can show a panic fails that connection's requests and nothing else.
#[cfg(debug_assertions)]
pub const PANIC_TEST_PATH: &str = "/__ferro_test_panic__";

pub(crate) async fn run(pool: Arc<dyn ConnOwner>, conn_id: u64) {
    // Counted as alive for as long as the task exists (also when it ends by a panic or an abort).
    let _alive = pool.shared().conn_alive();
    // A bridged socket's addresses come from JS, which knows them.
    let mut bridge_addrs = None;
    pool.connecting();
    let connected = if pool.opts().bridged {
        let started = tokio::time::Instant::now();
        match bridge::open(pool.shared(), pool.id(), pool.opts().connect_timeout).await {
            Ok((io, addrs)) => {
                bridge_addrs = Some(addrs);
                match pool.opts().tls.as_ref() {
                    // The JS socket is a plain byte stream (a proxy tunnel): TLS to the origin is
                    // the engine's, within what is left of the connect timeout.
                    Some(tls) => {
                        let left = pool.opts().connect_timeout.map(|t| t.saturating_sub(started.elapsed()));
                        Transport::tls_over_bridge(io, tls, left).await
                    }
                    None => Ok(Transport::Bridged(io)),
                }
            }
            Err(e) => Err(e),
        }
    } else {
        Transport::connect(&pool.opts().target, pool.opts().tls.as_ref(), pool.opts().connect_timeout).await
    };
    let io = match connected {
        Ok(io) => io,
        Err(ConnectError::Timeout) => {
            return pool.connect_failed(conn_id, ErrorCode::ConnectTimeout, "", "Connect Timeout Error");
        }
        Err(ConnectError::Io(e)) => {
            let msg = format!("connect {}: {e}", errno_name(&e));
            return pool.connect_failed(conn_id, ErrorCode::Connect, errno_name(&e), &msg);
        }
        Err(ConnectError::Tls { errno, message }) => {
            return pool.connect_failed(conn_id, ErrorCode::Connect, errno, &message);
        }
        Err(ConnectError::Bridge { code, errno, message }) => {
            return pool.connect_failed(conn_id, code, &errno, &message);
        }
    };
    if let (Some(idle), Some(tcp)) = (pool.opts().tcp_keep_alive, io.tcp()) {
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
    // ALPN chose h2 (over the engine's TLS, or Node's for a bridged socket), or h2c by prior knowledge.
    let h2 = if addrs.contains("|tls|") { addrs.ends_with("|tls|h2") } else { pool.opts().h2.prior_knowledge };
    if h2 {
        return crate::h2::session::run(pool, conn_id, io, addrs).await;
    }
    // This task speaks HTTP/1.1 (an h2 session reports "h2").
    pool.connected(conn_id, "h1", &addrs);
    let mut conn = Conn::new(pool.clone(), conn_id, io, addrs);
    let end = poll_fn(|cx| conn.poll(cx)).await;
    conn.finish(end);
}

/// Why a connection ended.
pub(crate) enum End {
    /// Closed on purpose (idle timeout, no reuse, pool closing): nothing failed.
    Clean(&'static str),
    /// Failed: the request at the head of the pipeline gets this error, the rest are re-queued.
    Failed { code: ErrorCode, errno: &'static str, message: String },
    /// An in-flight request was aborted from JS; the socket cannot be reused mid-response.
    Aborted,
}

struct InFlight {
    req: Request,
    /// Any byte of its response was seen (so it can no longer be re-sent).
    started: bool,
    /// The final (non-1xx) head arrived.
    head_done: bool,
    body_bytes: u64,
}

/// A request whose body is still arriving from JS through its pipe.
struct Streaming {
    id: u32,
    ctl: Arc<ReqCtl>,
    /// Bytes still owed under Content-Length; None when chunked.
    remaining: Option<u64>,
}

/// The connection after a 101 or a CONNECT 2xx: a byte tunnel between JS and the server.
struct Tunnel {
    id: u32,
    ctl: Arc<ReqCtl>,
    read_eof: bool,
    end_requested: bool,
    write_closed: bool,
}

struct Conn {
    pool: Arc<dyn ConnOwner>,
    shared: Arc<Shared>,
    sink: Arc<dyn EventSink>,
    id: u64,
    io: Transport,
    rbuf: BytesMut,
    wbuf: Vec<u8>,
    wpos: usize,
    /// Requests are only "written" once all of wbuf went out; `unwritten` counts the tail of
    /// `inflight` still in wbuf.
    unwritten: usize,
    decoder: ResponseDecoder,
    inflight: VecDeque<InFlight>,
    /// A blocking request is outstanding without its headers: no more pipelining.
    blocked: bool,
    /// No more requests on this connection (reset requested, server said close, poisoned...).
    no_reuse: bool,
    /// A pause stopped decoding early; decoding resumes with it, even if the socket has nothing
    /// more to read.
    undecoded: bool,
    served: u64,
    keep_alive: Duration,
    timer: Pin<Box<Sleep>>,
    armed: Instant,
    /// When the front request was fully written, or its last body chunk arrived, or idle began.
    mark: Instant,
    /// Only one streamed body at a time, and nothing is pipelined behind it (undici's rule).
    streaming: Option<Streaming>,
    tunnel: Option<Tunnel>,
    addrs: String,
    /// The pool has been told this connection left (finish, or detached as a tunnel).
    left_pool: bool,
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86400 * 365)
}

impl Conn {
    fn new(pool: Arc<dyn ConnOwner>, id: u64, io: Transport, addrs: String) -> Conn {
        let shared = pool.shared().clone();
        let sink = shared.sink.clone();
        let armed = far_future();
        Conn {
            decoder: ResponseDecoder::new(pool.opts().max_header_size),
            keep_alive: pool.opts().keep_alive_timeout,
            pool,
            shared,
            sink,
            id,
            io,
            rbuf: BytesMut::with_capacity(READ_CHUNK),
            wbuf: Vec::with_capacity(4096),
            wpos: 0,
            unwritten: 0,
            inflight: VecDeque::new(),
            blocked: false,
            no_reuse: false,
            undecoded: false,
            served: 0,
            timer: Box::pin(tokio::time::sleep_until(armed)),
            armed,
            mark: Instant::now(),
            streaming: None,
            tunnel: None,
            addrs,
            left_pool: false,
        }
    }

    fn pipelining(&self) -> usize {
        self.pool.opts().pipelining.max(1)
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<End> {
        for _ in 0..BUDGET {
            if self.tunnel.is_some() {
                return self.poll_tunnel(cx);
            }
            if let Some(end) = self.check_control() {
                return Poll::Ready(end);
            }
            // A server's close often arrives right behind its last response: look for it before
            // reusing an idle connection, so no request (which might not be re-sendable) is
            // written into a socket that is already closing.
            if self.inflight.is_empty() && self.wbuf.is_empty() && self.served > 0 {
                if let Err(end) = self.read(cx) {
                    return Poll::Ready(end);
                }
            }
            self.fill(cx);
            let mut progress = match self.pump_body() {
                Ok(p) => p,
                Err(end) => return Poll::Ready(end),
            };
            progress |= match self.write(cx) {
                Ok(p) => p,
                Err(end) => return Poll::Ready(end),
            };
            if self.can_read() && !self.sink.congested(cx.waker()) {
                if self.undecoded {
                    self.undecoded = false;
                    if let Err(end) = self.on_bytes() {
                        return Poll::Ready(end);
                    }
                    progress = true;
                }
                match self.read(cx) {
                    Ok(p) => progress |= p,
                    Err(end) => return Poll::Ready(end),
                }
            }
            if self.tunnel.is_some() {
                // Just upgraded: the socket now belongs to the user, not the pool (as in undici),
                // so its slot frees up for new connections; the tunnel loop takes over.
                self.pool.detached(self.id);
                self.left_pool = true;
                continue;
            }
            if self.inflight.is_empty() && self.wbuf.is_empty() {
                if self.pool.finished() {
                    return Poll::Ready(End::Clean("closed"));
                }
                if self.no_reuse {
                    return Poll::Ready(End::Clean("connection not reusable"));
                }
            }
            if !progress {
                return match self.poll_timer(cx) {
                    Some(end) => Poll::Ready(end),
                    None => Poll::Pending,
                };
            }
        }
        // Budget used up with work left: let other connections run, then come back.
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Pause and abort set by JS. An aborted request that is already on the wire takes the
    /// connection down with it (its response bytes cannot be skipped safely).
    fn check_control(&mut self) -> Option<End> {
        if self.inflight.iter().any(|f| f.req.ctl.aborted()) {
            return Some(End::Aborted);
        }
        None
    }

    fn can_read(&self) -> bool {
        match self.inflight.front() {
            Some(f) => !f.req.ctl.paused(),
            None => true,
        }
    }

    /// Pulls queued requests this connection may take now and encodes them into the write buffer.
    fn fill(&mut self, cx: &mut Context<'_>) {
        if self.no_reuse || self.blocked || self.streaming.is_some() {
            return;
        }
        let owner = self.pool.clone();
        owner.take(self.id, cx.waker(), &mut Filler { conn: self, cx });
    }

    fn start(&mut self, req: Request, cx: &Context<'_>) {
        let framing = if req.has(flags::STREAM_BODY) {
            match req.stream_length {
                StreamLength::Known(n) => BodyFraming::Length(n),
                StreamLength::Chunked => BodyFraming::Chunked,
            }
        } else {
            match &req.body {
                Some(b) => BodyFraming::Length(b.len() as u64),
                None => BodyFraming::None,
            }
        };
        let before = self.wbuf.len();
        // The last request maxRequestsPerClient allows announces the close, as a reset does.
        let max = self.pool.opts().max_requests_per_connection;
        let last = max > 0 && self.served + 1 >= max;
        let kind = match encode_request_head(&req.head, framing, req.has(flags::RESET) || last, &mut self.wbuf) {
            Ok(k) => k,
            Err(e) => {
                let id = req.id;
                self.shared.forget(id);
                let msg = e.to_string();
                self.shared.emit(|w| w.error(events::ERROR, id, ErrorCode::InvalidArgument, "", &msg));
                return;
            }
        };
        debug_assert!(self.wbuf.len() > before);
        if req.has(flags::OBSERVE) {
            let (id, addrs) = (req.id, self.addrs.as_bytes());
            self.shared.emit(|w| w.bytes(events::SENT, id, addrs));
        }
        if let Some(b) = &req.body {
            self.wbuf.extend_from_slice(b);
        }
        self.decoder.push_expect(Expect { head: kind.head, connect: kind.connect, upgrade: req.has(flags::UPGRADE) });
        req.ctl.set_waker(cx.waker());
        if req.has(flags::BLOCKING) {
            self.blocked = true;
        }
        if req.has(flags::RESET) || kind.connect || req.has(flags::UPGRADE) {
            self.no_reuse = true;
        }
        self.served += 1;
        if last {
            self.no_reuse = true;
        }
        if req.has(flags::STREAM_BODY) {
            let remaining = match framing {
                BodyFraming::Length(n) => Some(n),
                _ => None,
            };
            self.streaming = Some(Streaming { id: req.id, ctl: req.ctl.clone(), remaining });
        }
        self.unwritten += 1;
        self.inflight.push_back(InFlight { req, started: false, head_done: false, body_bytes: 0 });
    }

    /// Moves what JS wrote for the streaming request into the write buffer, framed.
    fn pump_body(&mut self) -> Result<bool, End> {
        let Some(st) = self.streaming.as_mut() else {
            return Ok(false);
        };
        let taken = st.ctl.take_body();
        let mut progress = !taken.chunks.is_empty();
        for chunk in &taken.chunks {
            match &mut st.remaining {
                Some(rem) => {
                    if chunk.len() as u64 > *rem {
                        return Err(mismatch());
                    }
                    *rem -= chunk.len() as u64;
                    self.wbuf.extend_from_slice(chunk);
                }
                None => encode_chunk(chunk, &mut self.wbuf),
            }
        }
        let id = st.id;
        if taken.drained {
            self.shared.emit(|w| w.empty(events::BODY_DRAIN, id));
        }
        if taken.ended {
            match st.remaining {
                Some(0) => {}
                Some(_) => return Err(mismatch()),
                None => self.wbuf.extend_from_slice(LAST_CHUNK),
            }
            self.streaming = None;
            // The request is complete once this goes out; its headers timeout starts about now.
            self.mark = Instant::now();
            progress = true;
        }
        Ok(progress)
    }

    fn write(&mut self, cx: &mut Context<'_>) -> Result<bool, End> {
        let mut progress = false;
        while self.wpos < self.wbuf.len() {
            match Pin::new(&mut self.io).poll_write(cx, &self.wbuf[self.wpos..]) {
                Poll::Ready(Ok(0)) => return Err(self.io_failure(std::io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    self.wpos += n;
                    progress = true;
                }
                Poll::Ready(Err(e)) => return Err(self.io_failure(e)),
                Poll::Pending => break,
            }
        }
        if !self.wbuf.is_empty() && self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
            if self.unwritten == self.inflight.len() {
                // The front request just finished going out: its headers timeout starts now.
                self.mark = Instant::now();
            }
            self.unwritten = 0;
        }
        Ok(progress)
    }

    /// Tunnel mode: bytes both ways until both sides are closed, JS aborts, or I/O fails.
    fn poll_tunnel(&mut self, cx: &mut Context<'_>) -> Poll<End> {
        for _ in 0..BUDGET {
            let Some(t) = self.tunnel.as_mut() else {
                return Poll::Ready(End::Clean("tunnel closed"));
            };
            if t.ctl.aborted() {
                return Poll::Ready(End::Clean("tunnel closed"));
            }
            let (id, ctl) = (t.id, t.ctl.clone());
            let mut progress = false;
            if !t.write_closed {
                let taken = ctl.take_body();
                progress |= !taken.chunks.is_empty();
                for chunk in &taken.chunks {
                    self.wbuf.extend_from_slice(chunk);
                }
                if taken.drained {
                    self.shared.emit(|w| w.empty(events::BODY_DRAIN, id));
                }
                if taken.ended {
                    t.end_requested = true;
                }
                progress |= match self.write(cx) {
                    Ok(p) => p,
                    Err(end) => return Poll::Ready(end),
                };
                let t = self.tunnel.as_mut().expect("tunnel exists");
                if t.end_requested && self.wbuf.is_empty() {
                    match Pin::new(&mut self.io).poll_shutdown(cx) {
                        Poll::Ready(_) => {
                            t.write_closed = true;
                            progress = true;
                        }
                        Poll::Pending => {}
                    }
                }
            }
            let t = self.tunnel.as_ref().expect("tunnel exists");
            if !t.read_eof && !ctl.paused() && !self.sink.congested(cx.waker()) {
                if self.rbuf.capacity() - self.rbuf.len() < READ_CHUNK / 4 {
                    self.rbuf.reserve(READ_CHUNK);
                }
                let n = {
                    let mut rb = ReadBuf::uninit(self.rbuf.spare_capacity_mut());
                    match Pin::new(&mut self.io).poll_read(cx, &mut rb) {
                        Poll::Ready(Ok(())) => Some(rb.filled().len()),
                        Poll::Ready(Err(e)) => return Poll::Ready(self.io_failure(e)),
                        Poll::Pending => None,
                    }
                };
                match n {
                    Some(0) => {
                        self.shared.emit(|w| w.end(id, None));
                        if let Some(t) = self.tunnel.as_mut() {
                            t.read_eof = true;
                        }
                        progress = true;
                    }
                    Some(n) => {
                        // SAFETY: poll_read initialised and filled exactly `n` bytes of the spare capacity.
                        unsafe { self.rbuf.set_len(self.rbuf.len() + n) };
                        let data = self.rbuf.split();
                        self.shared.emit(|w| w.data(id, &data));
                        progress = true;
                    }
                    None => {}
                }
            }
            let t = self.tunnel.as_ref().expect("tunnel exists");
            if t.read_eof && t.write_closed {
                return Poll::Ready(End::Clean("tunnel ended"));
            }
            if !progress {
                return Poll::Pending;
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    fn io_failure(&self, e: std::io::Error) -> End {
        End::Failed { code: ErrorCode::Socket, errno: errno_name(&e), message: e.to_string() }
    }

    fn read(&mut self, cx: &mut Context<'_>) -> Result<bool, End> {
        if self.rbuf.capacity() - self.rbuf.len() < READ_CHUNK / 4 {
            self.rbuf.reserve(READ_CHUNK);
        }
        let n = {
            let spare = self.rbuf.spare_capacity_mut();
            let mut rb = ReadBuf::uninit(spare);
            match Pin::new(&mut self.io).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) => rb.filled().len(),
                Poll::Ready(Err(e)) => return Err(self.io_failure(e)),
                Poll::Pending => return Ok(false),
            }
        };
        if n == 0 {
            return Err(self.on_eof());
        }
        // SAFETY: poll_read initialised and filled exactly `n` bytes of the spare capacity.
        unsafe { self.rbuf.set_len(self.rbuf.len() + n) };
        self.on_bytes()?;
        Ok(true)
    }

    /// Decodes everything buffered and hands the events to JS in one batch.
    fn on_bytes(&mut self) -> Result<(), End> {
        let shared = self.shared.clone();
        let mut result = Ok(());
        let mut done: Vec<u32> = Vec::new();
        shared.write_events(&mut |q| {
            let mut w = Writer::new(q);
            result = self.decode_into(&mut w, &mut done);
        });
        for id in done {
            self.shared.forget(id);
        }
        result
    }

    fn decode_into(&mut self, w: &mut Writer<'_>, done: &mut Vec<u32>) -> Result<(), End> {
        loop {
            if self.inflight.front().is_some_and(|f| f.req.ctl.paused()) {
                // Leave the rest buffered until JS resumes. Decoding resumes then even with an
                // empty buffer: the decoder may still owe an item that needs no more bytes (the
                // End right after a Content-Length body's last Data).
                self.undecoded = true;
                return Ok(());
            }
            let item = match self.decoder.decode(&mut self.rbuf) {
                Ok(Some(item)) => item,
                Ok(None) => break,
                Err(e) => {
                    return Err(End::Failed { code: ErrorCode::from_decode(&e), errno: "", message: e.to_string() })
                }
            };
            let Some(front) = self.inflight.front_mut() else {
                return Err(End::Failed { code: ErrorCode::Parser, errno: "", message: "response without a request".into() });
            };
            front.started = true;
            let id = front.req.id;
            match item {
                Decoded::Head(head) => {
                    #[cfg(debug_assertions)]
                    if front.req.head.split('\0').nth(1) == Some(PANIC_TEST_PATH) {
                        panic!("ferro test hook: a connection task panics");
                    }
                    if head.status >= 200 {
                        front.head_done = true;
                        self.blocked = false;
                        self.mark = Instant::now();
                        if !head.keep_alive {
                            self.no_reuse = true;
                        }
                        self.keep_alive = self.keep_alive_for(head.keep_alive_timeout_ms);
                        if head.keep_alive_timeout_ms.is_some() && self.keep_alive.is_zero() {
                            // The server drops the socket before the threshold would let us use it.
                            self.no_reuse = true;
                        }
                    }
                    w.head(id, &head);
                }
                Decoded::Data(chunk) => {
                    front.body_bytes += chunk.len() as u64;
                    if let Some(max) = self.pool.opts().max_response_size {
                        if front.body_bytes > max {
                            return Err(End::Failed {
                                code: ErrorCode::ResponseTooLarge,
                                errno: "",
                                message: "Response content exceeded max size".into(),
                            });
                        }
                    }
                    self.mark = Instant::now();
                    w.data(id, &chunk);
                }
                Decoded::End { trailers } => {
                    w.end(id, trailers.as_ref());
                    if self.streaming.as_ref().is_some_and(|s| s.id == id) {
                        // Answered before its body was all sent: the rest can't follow on this connection.
                        self.streaming = None;
                        self.no_reuse = true;
                    }
                    self.inflight.pop_front();
                    done.push(id);
                    self.mark = Instant::now();
                }
                Decoded::Upgrade(head) => {
                    w.upgrade(id, &head, &self.addrs);
                    let Some(f) = self.inflight.pop_front() else {
                        return Ok(());
                    };
                    self.streaming = None;
                    self.no_reuse = true;
                    // Bytes the server sent right behind the head already belong to the tunnel.
                    if !self.rbuf.is_empty() {
                        let rest = self.rbuf.split();
                        w.data(id, &rest);
                    }
                    self.tunnel = Some(Tunnel {
                        id,
                        ctl: f.req.ctl.clone(),
                        read_eof: false,
                        end_requested: false,
                        write_closed: false,
                    });
                    return Ok(());
                }
            }
        }
        if self.inflight.is_empty() && !self.rbuf.is_empty() {
            // Bytes nobody asked for: the connection is out of step with the server; never reuse it.
            return Err(End::Clean("unsolicited bytes after a complete response"));
        }
        Ok(())
    }

    fn on_eof(&mut self) -> End {
        let mut ended = None;
        let res = self.decoder.eof();
        match res {
            Ok(Some(Decoded::End { trailers })) => {
                if let Some(front) = self.inflight.pop_front() {
                    let id = front.req.id;
                    self.shared.emit(|w| w.end(id, trailers.as_ref()));
                    self.shared.forget(id);
                }
                ended = Some(End::Clean("closed after a close-delimited body"));
            }
            Ok(_) => {}
            Err(e) => {
                return End::Failed { code: ErrorCode::from_decode(&e), errno: "", message: e.to_string() };
            }
        }
        ended.unwrap_or_else(|| {
            if self.inflight.is_empty() {
                End::Clean("other side closed")
            } else {
                End::Failed { code: ErrorCode::Socket, errno: "", message: "other side closed".into() }
            }
        })
    }

    /// Keep-alive for the next idle period: the server's hint minus the threshold, capped.
    fn keep_alive_for(&self, hint_ms: Option<u64>) -> Duration {
        let o = self.pool.opts();
        match hint_ms {
            Some(ms) => Duration::from_millis(ms)
                .saturating_sub(o.keep_alive_timeout_threshold)
                .min(o.keep_alive_max_timeout),
            None => o.keep_alive_timeout,
        }
    }

    /// One timer serves the headers, body and keep-alive timeouts. It is only re-armed when the
    /// deadline moves earlier or it fires early, so body chunks don't touch the timer wheel.
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> Option<End> {
        loop {
            let (deadline, what) = self.deadline();
            let deadline = deadline?;
            if deadline < self.armed || self.timer.is_elapsed() {
                self.timer.as_mut().reset(deadline);
                self.armed = deadline;
            }
            match self.timer.as_mut().poll(cx) {
                Poll::Pending => return None,
                Poll::Ready(()) => {
                    if Instant::now() >= deadline {
                        return Some(what);
                    }
                    // Fired for an older deadline; loop re-arms for the current one.
                    self.armed = deadline;
                    self.timer.as_mut().reset(deadline);
                }
            }
        }
    }

    fn deadline(&self) -> (Option<Instant>, End) {
        match self.inflight.front() {
            None => {
                if self.keep_alive.is_zero() {
                    return (Some(self.mark), End::Clean("socket idle timeout"));
                }
                (Some(self.mark + self.keep_alive), End::Clean("socket idle timeout"))
            }
            Some(f) if f.req.ctl.paused() => (None, End::Clean("")),
            Some(f) if !f.head_done => {
                let body_pending = self.streaming.as_ref().is_some_and(|s| s.id == f.req.id);
                if self.unwritten == self.inflight.len() || body_pending {
                    return (None, End::Clean(""));
                }
                match f.req.headers_timeout {
                    Some(t) => (
                        Some(self.mark + t),
                        End::Failed { code: ErrorCode::HeadersTimeout, errno: "", message: "Headers Timeout Error".into() },
                    ),
                    None => (None, End::Clean("")),
                }
            }
            Some(f) => match f.req.body_timeout {
                Some(t) => (
                    Some(self.mark + t),
                    End::Failed { code: ErrorCode::BodyTimeout, errno: "", message: "Body Timeout Error".into() },
                ),
                None => (None, End::Clean("")),
            },
        }
    }

    /// Settles every request still on this connection: the head of the pipeline fails with the
    /// cause (unless it never saw a response byte and may be re-sent); the rest go back to the queue.
    fn finish(&mut self, end: End) {
        let pool = self.pool.clone();
        let shared = self.shared.clone();
        self.left_pool = true;
        let (code, errno, message) = match &end {
            End::Clean(m) => (ErrorCode::Info, "", m.to_string()),
            End::Failed { code, errno, message } => (*code, *errno, message.clone()),
            End::Aborted => (ErrorCode::Info, "", "request aborted".to_string()),
        };
        if let Some(t) = self.tunnel.take() {
            if let End::Failed { code, errno, message } = &end {
                let (code, errno, message) = (*code, *errno, message.clone());
                shared.emit(|w| w.error(events::ERROR, t.id, code, errno, &message));
            } else if !t.read_eof && !t.ctl.aborted() {
                shared.emit(|w| w.end(t.id, None));
            }
            shared.forget(t.id);
            // Detached from the pool when it became a tunnel.
            return;
        }
        let inflight = std::mem::take(&mut self.inflight);
        let mut requeue = Vec::new();
        let mut failed = Vec::new();
        let reused = self.served > inflight.len() as u64;
        for (i, f) in inflight.into_iter().enumerate() {
            if f.req.ctl.aborted() {
                shared.forget(f.req.id);
                continue;
            }
            // A request behind the head never had a chance; the head may be re-sent only when no
            // byte of its response arrived and the failure is the connection's, not the response's.
            let resendable = !f.started
                && f.req.has(flags::IDEMPOTENT)
                && !f.req.has(flags::STREAM_BODY)
                && f.req.retries < MAX_RETRIES
                && (i > 0 || (reused && code == ErrorCode::Socket) || matches!(end, End::Aborted));
            if resendable {
                requeue.push(f.req);
            } else {
                failed.push(f.req.id);
            }
        }
        // Without a failure cause (clean close with requests aboard, e.g. the server closed after
        // `connection: close`), requests that cannot be re-sent fail as a socket error.
        let fail_code = if code == ErrorCode::Info { ErrorCode::Socket } else { code };
        shared.emit(|w| {
            for id in &failed {
                w.error(events::ERROR, *id, fail_code, errno, &message);
            }
            for r in &requeue {
                w.empty(events::RETRY, r.id);
            }
        });
        for id in &failed {
            shared.forget(*id);
        }
        if !requeue.is_empty() {
            pool.requeue(requeue);
        }
        pool.disconnected(self.id, code, &message);
    }
}

/// The pipelining rules, as the pool's queue sees them while this connection takes work.
struct Filler<'a, 'c> {
    conn: &'a mut Conn,
    cx: &'a Context<'c>,
}

impl Taker for Filler<'_, '_> {
    fn wants_more(&self) -> bool {
        let c = &self.conn;
        c.inflight.len() < c.pipelining() && !c.blocked && !c.no_reuse && c.streaming.is_none()
    }
    /// undici's rules: only idempotent requests join a non-empty pipeline; upgrades never do.
    fn admits(&self, next: &Request) -> bool {
        self.conn.inflight.is_empty()
            || (next.has(flags::IDEMPOTENT) && !next.has(flags::UPGRADE) && !next.has(flags::STREAM_BODY))
    }
    fn submit(&mut self, req: Request) {
        self.conn.start(req, self.cx);
    }
}

impl Drop for Conn {
    /// Reached with requests aboard only when the task was torn down by a panic or by the runtime
    /// shutting down: fail them rather than leave JS waiting forever.
    fn drop(&mut self) {
        let mut ids: Vec<u32> = self.inflight.drain(..).map(|f| f.req.id).collect();
        ids.extend(self.tunnel.take().map(|t| t.id));
        if !self.left_pool {
            // Otherwise the pool would count this connection forever and, at its connection
            // limit, never open another one: later requests would wait for ever.
            self.left_pool = true;
            self.pool.disconnected(self.id, ErrorCode::Internal, "connection task ended unexpectedly");
        }
        if ids.is_empty() {
            return;
        }
        let destroyed = self.pool.destroyed();
        if !destroyed {
            self.shared.emit(|w| {
                for id in &ids {
                    w.error(events::ERROR, *id, ErrorCode::Internal, "", "connection task ended unexpectedly");
                }
            });
        }
        for id in ids {
            self.shared.forget(id);
        }
    }
}

fn mismatch() -> End {
    End::Failed {
        code: ErrorCode::RequestContentLengthMismatch,
        errno: "",
        message: "Request body length does not match content-length header".into(),
    }
}

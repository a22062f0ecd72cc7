//! The HTTP/1.1 session of a connection (`run`, see `session.rs`): drives the sans-IO codec
//! (`crate::h1`) over a transport, with the pipeline (`pipeline.rs`), backpressure (pause stops
//! reading), timeouts and keep-alive. Reads, writes, control flags and timers are all handled in
//! one hand-written `poll`, so a connection is a single task and a single wake-up serves
//! everything that became ready. An upgrade ends the session with the socket handed over
//! (`End::Upgraded`).
use super::buffers::Buffers;
use super::pipeline::{self, Pipeline, Settled};
use super::session::{fail_lost, End, Upgraded, BUDGET, LOST};
use crate::driver::Timer;
use crate::error::ErrorCode;
use crate::events;
use crate::h1::{
    encode::encode_chunk, encode::LAST_CHUNK, encode_request_head, BodyFraming, Expect,
    ResponseDecoder,
};
use crate::owner::{ConnOwner, Resend, Taker};
use crate::registry::{EventSink, Shared};
use crate::request::{flags, Breach, ReqCtl, Request, StreamLength, PIPE_HIGH_WATER};
use crate::transport::Transport;
use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;

#[path = "http1_read.rs"]
mod read;
#[cfg(test)]
#[path = "http1_tests.rs"]
mod tests;
#[path = "http1_timeouts.rs"]
mod timeouts;

pub(super) struct Http1 {
    pool: Arc<dyn ConnOwner>,
    shared: Arc<Shared>,
    sink: Arc<dyn EventSink>,
    id: u64,
    io: Transport,
    bufs: Buffers,
    decoder: ResponseDecoder,
    pipe: Pipeline,
    /// A pause stopped decoding early; decoding resumes with it, even if the socket has nothing
    /// more to read.
    undecoded: bool,
    keep_alive: Duration,
    timer: Timer,
    armed: Instant,
    /// When the front request was fully written, or its last body chunk arrived, or idle began.
    mark: Instant,
    /// A 101 or CONNECT 2xx came for this request: the socket is its now (`run` hands it over).
    upgraded: Option<(u32, Arc<ReqCtl>)>,
    addrs: String,
    /// The pool has been told this connection left (`finish`).
    left_pool: bool,
    /// A streamed body's source failed (`ReqCtl::fail_body`): once what it gave is written, its
    /// request is aborted.
    abort_when_written: Option<Arc<ReqCtl>>,
    /// Bytes read from the socket so far: where each response begins, against when its request's
    /// head went out (`InFlight::sent_at`).
    read_total: u64,
    /// `on_bytes`'s list of requests answered, kept between reads (no allocation per response).
    done: Vec<u32>,
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86400 * 365)
}

impl Http1 {
    pub(super) fn new(pool: Arc<dyn ConnOwner>, id: u64, io: Transport, addrs: String) -> Http1 {
        let shared = pool.shared().clone();
        let sink = shared.sink.clone();
        let armed = far_future();
        Http1 {
            decoder: ResponseDecoder::new(pool.opts().max_header_size),
            keep_alive: pool.opts().keep_alive_timeout,
            pipe: Pipeline::new(pool.opts().pipelining),
            pool,
            shared,
            sink,
            id,
            io,
            bufs: Buffers::new(),
            undecoded: false,
            timer: Timer::at(armed),
            armed,
            mark: Instant::now(),
            upgraded: None,
            addrs,
            left_pool: false,
            abort_when_written: None,
            read_total: 0,
            done: Vec::new(),
        }
    }

    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<End> {
        for _ in 0..BUDGET {
            if let Some(end) = self.check_control() {
                return Poll::Ready(end);
            }
            // A server's close often arrives right behind its last response, and a hostile or
            // confused one may send a response nobody asked for: read what came before reusing an
            // idle connection, so no request is written into a socket that is closing, or handed
            // a response that was there before it was sent. (`idle_unread` covers what the
            // reactor has not reported yet.)
            if self.reused_idle() {
                if let Err(end) = self.read(cx) {
                    return Poll::Ready(end);
                }
            }
            self.fill(cx);
            let mut progress = match self.pump_body() {
                Ok(p) => p,
                Err(end) => return Poll::Ready(end),
            };
            let wrote = match self.write(cx) {
                Ok(p) => p,
                Err(end) => return Poll::Ready(end),
            };
            progress |= wrote;
            if let Some(ctl) = &self.abort_when_written {
                // Written, or as much as the socket takes now (undici's destroy keeps no more).
                if self.bufs.wbuf.is_empty() || !wrote {
                    ctl.abort();
                    return Poll::Ready(End::Aborted);
                }
            }
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
            if self.upgraded.is_some() {
                // `run` hands the socket over (the End's words are never heard).
                return Poll::Ready(End::Clean("upgraded"));
            }
            if self.pipe.inflight.is_empty() && self.bufs.wbuf.is_empty() {
                if self.pool.finished() {
                    return Poll::Ready(End::Clean("closed"));
                }
                if self.pipe.no_reuse {
                    return Poll::Ready(End::Clean("reset"));
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
        if self.pipe.inflight.iter().any(|f| f.req.ctl.aborted()) {
            return Some(End::Aborted);
        }
        None
    }

    /// Reused, and nothing on it awaits a response or is still to be written.
    fn reused_idle(&self) -> bool {
        self.pipe.inflight.is_empty() && self.bufs.wbuf.is_empty() && self.pipe.served > 0
    }

    /// The socket of a reused idle connection holds something unread: it arrived before any
    /// request could have asked for it (a stray response, or the server's close). The next request
    /// waits until it was read (the reactor reports it soon): a response then ends the connection
    /// and the request goes to another one, unsent. One peek per request taken on such a
    /// connection; the read before `fill` only sees what the reactor has reported, which can lag
    /// behind what arrived (it did, on the JS thread, when the stray came in the same turn).
    fn idle_unread(&self) -> bool {
        self.reused_idle() && self.io.has_unread()
    }

    fn can_read(&self) -> bool {
        match self.pipe.inflight.front() {
            Some(f) => !f.req.ctl.paused(),
            None => true,
        }
    }

    /// Pulls queued requests this connection may take now and encodes them into the write buffer.
    fn fill(&mut self, cx: &mut Context<'_>) {
        if !self.pipe.wants_more() {
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
        let before = self.bufs.wbuf.len();
        // The last request maxRequestsPerClient allows announces the close, as a reset does.
        let last = self.pipe.next_is_last(self.pool.opts().max_requests_per_connection);
        let kind = encode_request_head(
            &req.head,
            framing,
            req.has(flags::RESET) || last,
            &mut self.bufs.wbuf,
        );
        debug_assert!(self.bufs.wbuf.len() > before);
        if req.has(flags::OBSERVE) {
            let (id, addrs) = (req.id, self.addrs.as_bytes());
            self.shared.emit(|w| w.bytes(events::SENT, id, addrs));
        }
        if let Some(b) = &req.body {
            self.bufs.wbuf.extend_from_slice(b);
        }
        self.decoder.push_expect(Expect {
            head: kind.head,
            connect: kind.connect,
            upgrade: req.has(flags::UPGRADE),
        });
        req.ctl.set_waker(cx.waker());
        let stream = req.has(flags::STREAM_BODY).then_some(match framing {
            BodyFraming::Length(n) => Some(n),
            _ => None,
        });
        self.pipe.push(req, before, kind.connect, last, stream);
    }

    /// Moves what JS wrote for the streaming request into the write buffer, framed.
    fn pump_body(&mut self) -> Result<bool, End> {
        let Some(st) = self.pipe.streaming.as_mut() else {
            return Ok(false);
        };
        // What JS wrote stays in its pipe (backpressuring JS) until the socket takes ours.
        if self.bufs.wbuf.len() >= PIPE_HIGH_WATER {
            return Ok(false);
        }
        let taken = st.ctl.take_body();
        let mut progress = !taken.chunks.is_empty();
        let failed = taken.failed.then(|| st.ctl.clone());
        for chunk in &taken.chunks {
            match &mut st.remaining {
                Some(rem) => {
                    if chunk.len() as u64 > *rem {
                        return Err(mismatch());
                    }
                    *rem -= chunk.len() as u64;
                    self.bufs.wbuf.extend_from_slice(chunk);
                }
                None => encode_chunk(chunk, &mut self.bufs.wbuf),
            }
        }
        if let Some(ctl) = failed {
            // No last chunk: the server must not take the body for complete.
            self.pipe.streaming = None;
            self.abort_when_written = Some(ctl);
            return Ok(true);
        }
        let id = st.id;
        if taken.drained {
            self.shared.emit(|w| w.empty(events::BODY_DRAIN, id));
        }
        if taken.ended {
            match st.remaining {
                Some(0) => {}
                Some(_) => return Err(mismatch()),
                None => self.bufs.wbuf.extend_from_slice(LAST_CHUNK),
            }
            self.pipe.streaming = None;
            // The request is complete once this goes out; its headers timeout starts about now.
            self.mark = Instant::now();
            progress = true;
        }
        Ok(progress)
    }

    fn write(&mut self, cx: &mut Context<'_>) -> Result<bool, End> {
        // Read before writing: a request is stamped as sent when its last write began, so the
        // server never has it before that moment. One clock read serves the stamp and the mark.
        let began = (!self.bufs.wbuf.is_empty()).then(Instant::now);
        let at = began.map_or(0, |t| crate::timings::stamp(t.into_std()));
        let (progress, all_out) = self.bufs.write(&mut self.io, cx).map_err(End::io)?;
        if progress {
            self.pipe.note_sent(self.bufs.written(), all_out, self.read_total);
        }
        if all_out {
            self.stamp_sent(at);
            if self.pipe.unwritten == self.pipe.inflight.len() {
                // The front request just finished going out: its headers timeout starts now.
                self.mark = began.unwrap_or_else(Instant::now);
            }
            self.pipe.unwritten = 0;
        }
        Ok(progress)
    }

    /// All that was written went out, the last of it by a write that began `at` (0: none did):
    /// the requests not yet stamped as sent are (`timings`), except one whose streamed body is
    /// still coming (nothing is pipelined behind it).
    fn stamp_sent(&self, mut at: u64) {
        let streaming = self.pipe.streaming.as_ref().map(|s| s.id);
        for f in self.pipe.inflight.iter().rev() {
            if f.req.ctl.timings.is_sent() {
                break;
            }
            if Some(f.req.id) != streaming {
                if at == 0 {
                    at = crate::timings::now();
                }
                f.req.ctl.timings.sent(at);
            }
        }
    }

    /// Settles every request still on this connection: the head of the pipeline fails with the
    /// cause (unless it never saw a response byte and may be re-sent); the rest go back to the queue.
    pub(super) fn finish(&mut self, end: &End) {
        let pool = self.pool.clone();
        let shared = self.shared.clone();
        self.left_pool = true;
        let (code, errno, message) = end.cause();
        let inflight = std::mem::take(&mut self.pipe.inflight);
        let Settled { requeue, mut failed, aborted } =
            pipeline::settle(inflight, self.pipe.served, code, matches!(end, End::Aborted));
        for id in aborted {
            shared.forget(id);
        }
        if !requeue.is_empty() {
            failed.extend(pool.requeue(requeue, Resend::Lost).iter().map(|r| r.id));
        }
        // Without a failure cause (clean close with requests aboard, e.g. the server closed after
        // `connection: close`), requests that cannot be re-sent fail as a socket error.
        let fail_code = if code == ErrorCode::Info { ErrorCode::Socket } else { code };
        let socket = events::socket_info(self.bufs.sent(), self.read_total, &self.addrs);
        shared.emit(|w| {
            for id in &failed {
                w.socket_error(events::ERROR, *id, fail_code, errno, &socket, &message);
            }
        });
        for id in &failed {
            shared.forget(*id);
        }
        pool.disconnected(self.id, code, &message, &socket);
    }
}

/// The pool's queue hands this connection work by the pipeline's rules.
struct Filler<'a, 'c> {
    conn: &'a mut Http1,
    cx: &'a Context<'c>,
}

impl Taker for Filler<'_, '_> {
    fn wants_more(&self) -> bool {
        self.conn.pipe.wants_more()
    }
    fn admits(&self, next: &Request) -> bool {
        self.conn.pipe.admits(next) && !self.conn.idle_unread()
    }
    fn submit(&mut self, req: Request) {
        self.conn.start(req, self.cx);
    }
}

/// The session while its task runs it. Dropped with the session inside only when the task was torn
/// down (a panic, the runtime shutting down): the requests aboard fail rather than leave JS
/// waiting forever.
struct Live(Option<Http1>);

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(s) = self.0.as_mut() {
            s.lost();
        }
    }
}

/// The HTTP/1.1 session (see `session.rs`) over a connected socket: until the connection ends,
/// or an upgrade hands the socket over.
pub(super) async fn run(pool: Arc<dyn ConnOwner>, id: u64, io: Transport, addrs: String) -> End {
    pool.connected(id, "h1", &addrs);
    let mut live = Live(Some(Http1::new(pool, id, io, addrs)));
    let end = poll_fn(|cx| live.0.as_mut().expect("running").poll(cx)).await;
    let mut s = live.0.take().expect("running");
    let Some((id, ctl)) = s.upgraded.take() else {
        s.finish(&end);
        return end;
    };
    // The socket now belongs to the user, not the pool (as in undici), so its slot frees up for
    // new connections. Nothing else is aboard: an upgrade or CONNECT takes an idle connection,
    // and ends its reuse.
    s.pool.detached(s.id);
    End::Upgraded(Box::new(Upgraded { io: s.io, bufs: s.bufs, id, ctl }))
}

impl Http1 {
    fn lost(&mut self) {
        let ids: Vec<u32> = self.pipe.inflight.drain(..).map(|f| f.req.id).collect();
        if !self.left_pool {
            // Otherwise the pool would count this connection forever and, at its connection
            // limit, never open another one: later requests would wait for ever.
            self.left_pool = true;
            self.pool.disconnected(self.id, ErrorCode::Internal, LOST, "");
        }
        fail_lost(&*self.pool, &ids);
    }
}

fn mismatch() -> End {
    End::breach(Breach::LengthMismatch)
}

//! One request on an HTTP/2 session, as a task of its own: it sends the body under flow control,
//! receives the response and turns it into the same events HTTP/1.1 produces. JS reaches it
//! through the request's `ReqCtl`: pause stops taking data (so no window is granted and the
//! server stops sending on this stream only), abort resets the stream with CANCEL.
use super::response::{describe, head, header_block, unprocessed};
use crate::conn::session::fail_torn_down;
use crate::driver::Timer;
use crate::error::ErrorCode;
use crate::events::{self, Writer};
use crate::owner::ConnOwner;
use crate::request::{Breach, Limits, ReqCtl, Request};
use ::h2::client::ResponseFuture;
use ::h2::{Reason, RecvStream, SendStream};
use bytes::Bytes;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;

/// How a stream ended, for its session.
pub(crate) enum Outcome {
    /// Settled: its events are sent (or none are owed, as after an abort).
    Done,
    /// The server did not process it (GOAWAY below its id, REFUSED_STREAM) and its body can be
    /// sent again: it may be re-sent, else it fails with this error.
    Unprocessed(Box<Request>, ErrorCode, String),
}

/// What a session and its streams tell each other besides a stream's outcome.
#[derive(Default)]
pub(crate) struct Signals {
    /// Set by the session when it tears its streams down: what they fail with (see `Drop`).
    pub teardown: OnceLock<(ErrorCode, String)>,
    /// Set by a stream the server's GOAWAY failed. The h2 crate would still open streams on the
    /// session, which the server ignores: the session must take no more work.
    pub goaway: AtomicBool,
    /// Set when the socket read the peer's end (EOF; `counted.rs`). h2 then fails the open
    /// streams with an I/O error of its own ("stream closed because of a broken pipe"), where
    /// undici's h2 client, seeing the socket end, says SocketError 'other side closed' (also
    /// for a server that closes without a word of HTTP/2).
    pub peer_ended: AtomicBool,
    /// The connection's addresses, and the bytes its socket moved (`counted.rs`): what an error
    /// record's socket field says (`socket_info`).
    pub addrs: String,
    pub sent: AtomicU64,
    pub read: AtomicU64,
}

impl Signals {
    /// The session's connection, for an error record (`events::socket_info`).
    pub(super) fn socket_info(&self) -> String {
        events::socket_info(
            self.sent.load(Ordering::Relaxed),
            self.read.load(Ordering::Relaxed),
            &self.addrs,
        )
    }
}

/// Where the request body stands.
enum Body {
    /// Bytes still to send (a fixed body, or what JS wrote so far); `end` once nothing follows.
    Sending {
        chunks: VecDeque<Bytes>,
        end: bool,
    },
    /// Arriving from JS through the request's pipe; `remaining` under a known length.
    Piped {
        chunks: VecDeque<Bytes>,
        remaining: Option<u64>,
    },
    Done,
}

pub(crate) struct Stream {
    pool: Arc<dyn ConnOwner>,
    id: u32,
    ctl: Arc<ReqCtl>,
    /// Kept until the first response byte, so an unprocessed stream can be re-sent.
    req: Option<Request>,
    send: SendStream<Bytes>,
    body: Body,
    response: Option<ResponseFuture>,
    recv: Option<RecvStream>,
    head_method: bool,
    received: u64,
    /// The response's content-length, when it gave one.
    expected: Option<u64>,
    limits: Limits,
    timer: Timer,
    timer_armed: bool,
    /// Paused at the last poll: time spent paused does not count against the body timeout.
    was_paused: bool,
    /// Settled or handed back to the session: nothing more is owed to JS.
    settled: bool,
    /// `expect: 100-continue` was sent: the body waits for the server's 100.
    awaiting_continue: bool,
    /// What this stream and its session tell each other.
    pub(crate) signals: Arc<Signals>,
    /// A fixed body, kept for sending the request again if the server does not process it.
    replay_body: Option<Bytes>,
}

impl Stream {
    pub(crate) fn new(
        pool: Arc<dyn ConnOwner>,
        mut req: Request,
        response: ResponseFuture,
        send: SendStream<Bytes>,
        head_method: bool,
        piped: Option<Option<u64>>,
        awaiting_continue: bool,
    ) -> Stream {
        let mut replay_body = None;
        let body = match (piped, req.body.take()) {
            (Some(remaining), _) => Body::Piped { chunks: VecDeque::new(), remaining },
            (None, Some(b)) if !b.is_empty() => {
                let b = Bytes::from(b);
                replay_body = Some(b.clone());
                Body::Sending { chunks: VecDeque::from([b]), end: true }
            }
            _ => Body::Done,
        };
        let mut s = Stream {
            id: req.id,
            ctl: req.ctl.clone(),
            limits: req.limits,
            req: Some(req),
            pool,
            send,
            body,
            response: Some(response),
            recv: None,
            head_method,
            received: 0,
            expected: None,
            timer: Timer::after(Duration::from_secs(0)),
            timer_armed: false,
            was_paused: false,
            settled: false,
            awaiting_continue,
            signals: Arc::default(),
            replay_body,
        };
        if !matches!(s.body, Body::Piped { .. }) {
            s.arm(s.limits.headers_timeout);
        }
        if matches!(s.body, Body::Done) {
            // Nothing follows the head h2 was just given.
            s.ctl.timings.sent(crate::timings::now());
        }
        s
    }

    fn arm(&mut self, after: Option<Duration>) {
        match after {
            Some(d) if !d.is_zero() => {
                self.timer.as_mut().reset(Instant::now() + d);
                self.timer_armed = true;
            }
            _ => self.timer_armed = false,
        }
    }

    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Outcome> {
        self.ctl.set_waker(cx.waker());
        if self.ctl.aborted() {
            // JS has settled the request already; the server is told to stop.
            self.send.send_reset(Reason::CANCEL);
            return Poll::Ready(self.settle());
        }
        if let Some(done) = self.poll_informational(cx) {
            return Poll::Ready(done);
        }
        if let Some(done) = self.pump_body(cx) {
            return Poll::Ready(done);
        }
        if let Some(fut) = self.response.as_mut() {
            match Pin::new(fut).poll(cx) {
                Poll::Pending => {}
                Poll::Ready(Err(e)) => return Poll::Ready(self.failed(&e)),
                Poll::Ready(Ok(resp)) => {
                    self.response = None;
                    self.req = None;
                    if std::mem::take(&mut self.awaiting_continue) {
                        // A final answer without a 100: the body is not wanted; the stream is
                        // reset once the response is read.
                        self.body = Body::Done;
                    }
                    let (parts, recv) = resp.into_parts();
                    self.expected = parts
                        .headers
                        .get(http::header::CONTENT_LENGTH)
                        .and_then(|v| v.to_str().ok()?.parse().ok());
                    let head = head(parts.status.as_u16(), &parts.headers);
                    let id = self.id;
                    self.pool.shared().emit(|w| w.head(id, &head, &self.ctl.timings));
                    if self.head_method {
                        return Poll::Ready(self.end(None));
                    }
                    self.recv = Some(recv);
                    self.arm(self.limits.body_timeout);
                }
            }
        }
        if self.recv.is_some() {
            if let Some(done) = self.poll_recv(cx) {
                return Poll::Ready(done);
            }
        }
        let paused = self.ctl.paused();
        if paused || self.was_paused {
            self.was_paused = paused;
            if self.response.is_none() && self.timer_armed {
                self.arm(self.limits.body_timeout);
            }
        }
        if self.timer_armed && !paused && self.timer.as_mut().poll(cx).is_ready() {
            let breach =
                if self.response.is_some() { Breach::HeadersTimeout } else { Breach::BodyTimeout };
            self.send.send_reset(Reason::CANCEL);
            return Poll::Ready(self.breach(breach));
        }
        Poll::Pending
    }

    /// 1xx heads go to JS as HEAD events (onInfo); a 100 releases a held body.
    fn poll_informational(&mut self, cx: &mut Context<'_>) -> Option<Outcome> {
        let fut = self.response.as_mut()?;
        loop {
            match fut.poll_informational(cx) {
                Poll::Ready(Some(Ok(info))) => {
                    self.req = None;
                    let status = info.status().as_u16();
                    if status == 100 {
                        self.awaiting_continue = false;
                    }
                    let head = head(status, info.headers());
                    let id = self.id;
                    self.pool.shared().emit(|w| w.head(id, &head, &self.ctl.timings));
                }
                Poll::Ready(Some(Err(e))) => return Some(self.failed(&e)),
                Poll::Ready(None) | Poll::Pending => return None,
            }
        }
    }

    /// Delivers response data while JS is not paused and not behind; then the trailers.
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Option<Outcome> {
        let mut recv = self.recv.take()?;
        let out = self.drain(&mut recv, cx);
        if out.is_none() {
            self.recv = Some(recv);
        }
        out
    }

    fn drain(&mut self, recv: &mut RecvStream, cx: &mut Context<'_>) -> Option<Outcome> {
        loop {
            if self.ctl.paused() || self.pool.shared().sink.congested(cx.waker()) {
                return None;
            }
            match recv.poll_data(cx) {
                Poll::Pending => return None,
                Poll::Ready(Some(Ok(chunk))) => {
                    let _ = recv.flow_control().release_capacity(chunk.len());
                    if chunk.is_empty() {
                        continue;
                    }
                    self.received += chunk.len() as u64;
                    if let Err(breach) = self.limits.check_received(self.received) {
                        self.send.send_reset(Reason::CANCEL);
                        return Some(self.breach(breach));
                    }
                    let id = self.id;
                    self.pool.shared().emit(|w| w.data(id, chunk));
                    if self.timer_armed {
                        self.arm(self.limits.body_timeout);
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    return Some(self.ended_by_reset(&e).unwrap_or_else(|| self.failed(&e)))
                }
                Poll::Ready(None) => break,
            }
        }
        match recv.poll_trailers(cx) {
            Poll::Pending => None,
            Poll::Ready(Ok(trailers)) => Some(self.end(trailers.as_ref())),
            Poll::Ready(Err(e)) => Some(self.ended_by_reset(&e).unwrap_or_else(|| self.failed(&e))),
        }
    }

    /// Moves request body bytes into the stream as the peer's window allows; `Some` when the stream
    /// ended (as in `poll_recv`).
    fn pump_body(&mut self, cx: &mut Context<'_>) -> Option<Outcome> {
        if self.awaiting_continue {
            return None;
        }
        loop {
            let (chunks, finishing) = match &mut self.body {
                Body::Done => return None,
                Body::Sending { chunks, end } => (chunks, *end),
                Body::Piped { chunks, remaining } => {
                    let taken = self.ctl.take_body();
                    if taken.failed {
                        // The stream is reset (what DATA frames are queued may not go out first).
                        self.ctl.abort();
                        self.send.send_reset(Reason::CANCEL);
                        return Some(self.settle());
                    }
                    for c in taken.chunks {
                        if let Some(rem) = remaining {
                            if c.len() as u64 > *rem {
                                return Some(self.length_mismatch());
                            }
                            *rem -= c.len() as u64;
                        }
                        chunks.push_back(Bytes::from(c));
                    }
                    if taken.drained {
                        let id = self.id;
                        self.pool.shared().emit(|w| w.empty(events::BODY_DRAIN, id));
                    }
                    if taken.ended {
                        if remaining.is_some_and(|r| r > 0) {
                            return Some(self.length_mismatch());
                        }
                        let chunks = std::mem::take(chunks);
                        self.body = Body::Sending { chunks, end: true };
                        // The request is complete once its body is: the headers timeout starts.
                        self.arm(self.limits.headers_timeout);
                        continue;
                    }
                    (chunks, false)
                }
            };
            let Some(front) = chunks.front_mut() else {
                if finishing {
                    if let Err(e) = self.send.send_data(Bytes::new(), true) {
                        return Some(self.failed(&e));
                    }
                    self.body = Body::Done;
                    self.ctl.timings.sent(crate::timings::now());
                }
                return None;
            };
            self.send.reserve_capacity(front.len());
            match self.send.poll_capacity(cx) {
                Poll::Pending => return None,
                Poll::Ready(None) => return None, // the stream is closing; the response tells why
                Poll::Ready(Some(Err(e))) => return Some(self.failed(&e)),
                Poll::Ready(Some(Ok(0))) => return None,
                Poll::Ready(Some(Ok(n))) => {
                    let piece = if n >= front.len() {
                        chunks.pop_front().expect("front exists")
                    } else {
                        front.split_to(n)
                    };
                    let last = finishing && chunks.is_empty();
                    if let Err(e) = self.send.send_data(piece, last) {
                        return Some(self.failed(&e));
                    }
                    if last {
                        self.body = Body::Done;
                        self.ctl.timings.sent(crate::timings::now());
                        return None;
                    }
                }
            }
        }
    }

    /// RST_STREAM(NO_ERROR) after the response head is how a server may finish a response it has
    /// sent whole (RFC 9113 §8.1; node:http2 does it when it closes a stream whose END_STREAM is
    /// still queued). It ends the body, unless a content-length says bytes are missing: a
    /// truncated body is an error, never a short success.
    fn ended_by_reset(&mut self, e: &::h2::Error) -> Option<Outcome> {
        let graceful = e.is_reset() && e.reason() == Some(Reason::NO_ERROR);
        if graceful && self.expected.is_none_or(|n| n == self.received) {
            return Some(self.end(None));
        }
        None
    }

    fn length_mismatch(&mut self) -> Outcome {
        self.send.send_reset(Reason::CANCEL);
        self.breach(Breach::LengthMismatch)
    }

    fn breach(&mut self, b: Breach) -> Outcome {
        self.error(b.into(), b.message())
    }

    fn failed(&mut self, e: &::h2::Error) -> Outcome {
        if e.is_go_away() && e.is_remote() {
            self.signals.goaway.store(true, Ordering::Relaxed);
        }
        let (code, msg) = if e.is_io() && self.signals.peer_ended.load(Ordering::Relaxed) {
            (ErrorCode::Socket, PEER_CLOSED.to_string())
        } else {
            refusal(e)
        };
        let replayable = self.req.as_ref().is_some_and(Request::resendable);
        if unprocessed(e) && replayable {
            let mut req = self.req.take().expect("checked above");
            req.body = self.replay_body.take().map(|b| b.to_vec());
            self.settled = true;
            return Outcome::Unprocessed(Box::new(req), code, msg);
        }
        self.error(code, &msg)
    }

    fn error(&mut self, code: ErrorCode, msg: &str) -> Outcome {
        let id = self.id;
        if !self.ctl.aborted() {
            let socket =
                if code == ErrorCode::Socket { self.signals.socket_info() } else { String::new() };
            self.pool.shared().emit(|w: &mut Writer<'_>| {
                w.socket_error(events::ERROR, id, code, "", &socket, msg)
            });
        }
        self.settle()
    }

    fn end(&mut self, trailers: Option<&http::HeaderMap>) -> Outcome {
        let id = self.id;
        let block = trailers.map(header_block);
        self.pool.shared().emit(|w| w.end(id, block.as_ref()));
        self.settle()
    }

    fn settle(&mut self) -> Outcome {
        self.settled = true;
        self.pool.shared().forget(self.id);
        Outcome::Done
    }
}

/// undici's message for a connection the peer ended.
const PEER_CLOSED: &str = "other side closed";

/// How a stream failure reads: a GOAWAY with NO_ERROR (a graceful shutdown that did not take the
/// stream) is informational, as undici's `HTTP/2: "GOAWAY" frame received with code 0`.
fn refusal(e: &::h2::Error) -> (ErrorCode, String) {
    if e.is_go_away() && e.is_remote() && e.reason() == Some(Reason::NO_ERROR) {
        return (ErrorCode::Info, "HTTP/2: \"GOAWAY\" frame received with code 0".to_string());
    }
    describe(e)
}

impl Drop for Stream {
    /// Torn down with the session (destroy, a panic): a stream still owed events fails, rather
    /// than leave JS waiting.
    fn drop(&mut self) {
        if !self.settled {
            let failure = self.signals.teardown.get().cloned();
            let failure =
                failure.unwrap_or((ErrorCode::Socket, "HTTP/2: the session closed".into()));
            let socket = self.signals.socket_info();
            fail_torn_down(&*self.pool, &self.ctl, self.id, failure, &socket);
        }
    }
}

//! One request on an HTTP/3 connection, as a task of its own: it opens the request stream (quinn
//! holds it back while the server's stream limit is reached), sends the body as QUIC flow control
//! lets it, and turns the response into the same events HTTP/1.1 and HTTP/2 produce. JS reaches
//! it through the request's `ReqCtl`: pause stops reading this stream (its window closes, the
//! others go on), abort resets the sending side (RESET_STREAM) and drops the receiving side (quinn
//! sends STOP_SENDING). h3-quinn's `stop_sending` can panic while a read is pending, so the
//! receiving side is only ever dropped.
use super::zero_rtt::{Phase, PhaseRx};
use crate::conn::session::fail_torn_down;
use crate::error::ErrorCode;
use crate::events;
use crate::h2::response::{head, header_block};
use crate::owner::ConnOwner;
use crate::request::{flags, Breach, Limits, ReqCtl, Request, StreamLength};
use bytes::{Buf, Bytes};
use h3::client::{RequestStream, SendRequest};
use h3::error::{Code, ConnectionError, StreamError};
use h3_quinn::{OpenStreams, RecvStream, SendStream};
use std::future::{poll_fn, Future};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::Duration;
use tokio::sync::watch;

/// With the `test-hooks` feature only: a request for this path makes its stream task panic, so
/// tests can show the panic fails that request and nothing else (`__test__/h3-panic.test.ts`).
#[cfg(feature = "test-hooks")]
const PANIC_TEST_PATH: &str = "/__ferro_test_panic__";

/// Where an `expect: 100-continue` body stands (`Stream::run`).
const WAIT: u8 = 0;
const GO: u8 = 1;
const SKIP: u8 = 2;

/// How a stream ended, for its session.
pub(crate) enum Outcome {
    Done,
    /// The server did not process the request (its GOAWAY came before the request went out, or
    /// it reset the stream with H3_REQUEST_REJECTED before any answer): it may go to another
    /// connection; the failure is what it fails with past the pool's resend cap.
    Unprocessed(Request, Failure),
    /// It went in 0-RTT early data, which the server rejected or answered 425 (Too Early), or
    /// the handshake failed: the session sends it again (`zero_rtt.rs`).
    Replay(Request),
}

/// Why the exchange stopped before its end.
enum Stop {
    Aborted,
    Failed(Failure),
    /// The server reset the stream with H3_REQUEST_REJECTED (RFC 9114 §4.1.1): it did not
    /// process the request.
    Rejected(Failure),
    /// A 425 to a request sent in early data: not shown, the request goes again.
    TooEarly,
}

impl From<Failure> for Stop {
    fn from(f: Failure) -> Stop {
        Stop::Failed(f)
    }
}

/// What a session and its streams tell each other.
#[derive(Default)]
pub(crate) struct Signals {
    /// Set by the session when the connection ended: what streams still open fail with.
    pub teardown: OnceLock<(ErrorCode, String)>,
    /// Set by a stream that found the server going away: the session takes no more work.
    pub goaway: AtomicBool,
    /// The connection's addresses, for SENT events.
    pub addrs: String,
}

/// A request's failure: its error code and message.
pub(crate) type Failure = (ErrorCode, String);

/// The stream's debt to JS: until settled, dropping it (a panic, the session torn down) fails the
/// request rather than leave JS waiting.
pub(crate) struct Stream {
    pool: Arc<dyn ConnOwner>,
    id: u32,
    ctl: Arc<ReqCtl>,
    signals: Arc<Signals>,
    settled: bool,
    /// A response head (1xx included) reached JS: the request can no longer go again.
    answered: AtomicBool,
}

impl Stream {
    pub(super) fn new(pool: Arc<dyn ConnOwner>, req: &Request, signals: Arc<Signals>) -> Stream {
        Stream {
            pool,
            id: req.id,
            ctl: req.ctl.clone(),
            signals,
            settled: false,
            answered: AtomicBool::new(false),
        }
    }

    /// Runs the request to its end. `early`: it goes in 0-RTT early data, and is kept until the
    /// handshake's outcome says whether it must go again.
    pub(super) async fn run(
        mut self,
        mut req: Request,
        mut send: SendRequest<OpenStreams, Bytes>,
        head: http::Request<()>,
        head_method: bool,
        expect_continue: bool,
        early: Option<PhaseRx>,
    ) -> Outcome {
        #[cfg(feature = "test-hooks")]
        if head.uri().path() == PANIC_TEST_PATH {
            panic!("ferro test hook: an HTTP/3 stream task panics");
        }
        let ctl = self.ctl.clone();
        let opened = tokio::select! {
            biased;
            _ = aborted(&ctl) => return self.settle(),
            r = send.send_request(head) => r,
        };
        let stream = match opened {
            Ok(s) => s,
            Err(e) => {
                if let Some(phase) = early {
                    if lost(phase).await {
                        return self.replay(req);
                    }
                }
                if matches!(e, StreamError::RemoteClosing) {
                    self.signals.goaway.store(true, Ordering::Relaxed);
                    if req.resendable() {
                        self.settled = true;
                        return Outcome::Unprocessed(req, describe(&e));
                    }
                }
                let f = self.describe(&e);
                return self.fail(f);
            }
        };
        if req.has(flags::OBSERVE) {
            let (id, addrs) = (self.id, self.signals.addrs.as_bytes());
            self.pool.shared().emit(|w| w.bytes(events::SENT, id, addrs));
        }
        let (mut tx, mut rx) = stream.split();
        let piped = req.has(flags::STREAM_BODY).then_some(req.stream_length);
        let limits = req.limits;
        // Kept (the body too) until the stream's end, for sending it again: an early request the
        // handshake lost, or a request the server rejected unprocessed.
        let body = req.body.take().map(Bytes::from);
        // `expect: 100-continue`: the body waits until the server's 100 (GO), or is not sent at
        // all when a final response comes first (SKIP).
        let (gate, gate_rx) = watch::channel(if expect_continue { WAIT } else { GO });
        let end = {
            let sending = async {
                let mut gate_rx = gate_rx;
                match gate_rx.wait_for(|g| *g != WAIT).await.map(|g| *g) {
                    Ok(GO) => {
                        send_body(&mut tx, body.clone(), piped, &self.pool, self.id, &ctl).await
                    }
                    _ => {
                        tx.stop_stream(Code::H3_NO_ERROR);
                        Ok(())
                    }
                }
            };
            let receiving = self.receive(&mut rx, head_method, limits, &gate, early.is_some());
            tokio::pin!(sending, receiving);
            let mut sent = false;
            loop {
                tokio::select! {
                    biased;
                    _ = aborted(&ctl) => break Err(Stop::Aborted),
                    r = &mut sending, if !sent => match r {
                        Ok(()) => {
                            sent = true;
                            ctl.timings.sent(crate::timings::now());
                        }
                        Err(e) => break Err(e),
                    },
                    r = &mut receiving => break r,
                }
            }
        };
        match end {
            Ok(trailers) => {
                let id = self.id;
                let block = trailers.as_ref().map(header_block);
                self.pool.shared().emit(|w| w.end(id, block.as_ref()));
                self.settle()
            }
            Err(stop) => {
                // The server is told to stop: our side reset, theirs dropped (STOP_SENDING).
                tx.stop_stream(Code::H3_REQUEST_CANCELLED);
                drop(rx);
                req.body = body.map(|b| b.to_vec());
                let unanswered = !self.answered.load(Ordering::Relaxed);
                match (stop, early) {
                    (Stop::Aborted, _) => self.settle(),
                    (Stop::Rejected(f), _) if unanswered && req.resendable() => {
                        self.settled = true;
                        Outcome::Unprocessed(req, f)
                    }
                    (Stop::TooEarly, Some(_)) => self.replay(req),
                    (Stop::Failed(f) | Stop::Rejected(f), Some(phase)) => match lost(phase).await {
                        true => self.replay(req),
                        false => self.fail(f),
                    },
                    (Stop::Failed(f) | Stop::Rejected(f), None) => self.fail(f),
                    // `receive` stops at a 425 only for a request sent early.
                    (Stop::TooEarly, None) => self.fail((ErrorCode::Socket, "HTTP/3: 425".into())),
                }
            }
        }
    }

    /// The response: its head, its body while JS reads, then its trailers. `early`: the request
    /// went in early data, and a 425 to it is not shown (RFC 8470 §5.2).
    async fn receive(
        &self,
        rx: &mut RequestStream<RecvStream, Bytes>,
        head_method: bool,
        limits: Limits,
        gate: &watch::Sender<u8>,
        early: bool,
    ) -> Result<Option<http::HeaderMap>, Stop> {
        let (id, shared) = (self.id, self.pool.shared());
        // 1xx heads come first, each its own HEADERS frame (JS's onInfo); then the final one.
        loop {
            let resp = within(limits.headers_timeout, Breach::HeadersTimeout, rx.recv_response())
                .await?
                .map_err(|e| stop(&e, self.describe(&e)))?;
            if early && resp.status() == http::StatusCode::TOO_EARLY {
                return Err(Stop::TooEarly);
            }
            let h = head(resp.status().as_u16(), resp.headers());
            self.answered.store(true, Ordering::Relaxed);
            shared.emit(|w| w.head(id, &h, &self.ctl.timings));
            if resp.status() == http::StatusCode::CONTINUE {
                gate.send_replace(GO);
            }
            if !resp.status().is_informational() {
                // A final answer without a 100: the body is not wanted.
                gate.send_if_modified(|g| {
                    let waiting = *g == WAIT;
                    if waiting {
                        *g = SKIP;
                    }
                    waiting
                });
                break;
            }
        }
        if head_method {
            return Ok(None);
        }
        let mut received = 0u64;
        loop {
            // JS paused this body, or is behind: stop reading (the server stops at its window).
            poll_fn(|cx| {
                if self.ctl.paused() || shared.sink.congested(cx.waker()) {
                    Poll::Pending
                } else {
                    Poll::Ready(())
                }
            })
            .await;
            let chunk = within(limits.body_timeout, Breach::BodyTimeout, rx.recv_data())
                .await?
                .map_err(|e| self.describe(&e))?;
            let Some(mut chunk) = chunk else { break };
            let bytes = chunk.copy_to_bytes(chunk.remaining());
            if bytes.is_empty() {
                continue;
            }
            received += bytes.len() as u64;
            limits.check_received(received).map_err(breach)?;
            shared.emit(|w| w.data(id, bytes));
        }
        Ok(rx.recv_trailers().await.map_err(|e| self.describe(&e))?)
    }

    fn describe(&self, e: &StreamError) -> Failure {
        if let Some(t) = self.signals.teardown.get() {
            return t.clone();
        }
        describe(e)
    }

    fn fail(&mut self, (code, msg): Failure) -> Outcome {
        let id = self.id;
        if !self.ctl.aborted() {
            self.pool.shared().emit(|w| w.socket_error(events::ERROR, id, code, "", "", &msg));
        }
        self.settle()
    }

    /// The request goes again (`Outcome::Replay`); its debt to JS stays with it.
    fn replay(&mut self, req: Request) -> Outcome {
        self.settled = true;
        Outcome::Replay(req)
    }

    fn settle(&mut self) -> Outcome {
        self.settled = true;
        self.pool.shared().forget(self.id);
        Outcome::Done
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.settled {
            let failure = self.signals.teardown.get().cloned();
            let failure =
                failure.unwrap_or((ErrorCode::Socket, "HTTP/3: the connection closed".into()));
            fail_torn_down(&*self.pool, &self.ctl, self.id, failure, "");
        }
    }
}

/// Why the exchange stopped at `e` (`f`, how it reads): a rejection is told apart, the request
/// may go again.
fn stop(e: &StreamError, f: Failure) -> Stop {
    match e {
        StreamError::RemoteTerminate { code, .. } if *code == Code::H3_REQUEST_REJECTED => {
            Stop::Rejected(f)
        }
        _ => Stop::Failed(f),
    }
}

/// How an h3 stream failure reaches JS.
pub(crate) fn describe(e: &StreamError) -> Failure {
    match e {
        StreamError::RemoteTerminate { code, .. } => {
            (ErrorCode::Socket, format!("HTTP/3: stream reset by the server with code {code}"))
        }
        StreamError::ConnectionError { 0: c, .. } => describe_connection(c),
        StreamError::RemoteClosing => {
            (ErrorCode::Socket, "HTTP/3: \"GOAWAY\" frame received".to_string())
        }
        other => (ErrorCode::Socket, format!("HTTP/3: {other}")),
    }
}

/// Whether an early request's handshake ended with its early data lost (rejected, or the
/// connection failed): it must go again. Waits for the handshake's end.
async fn lost(mut phase: PhaseRx) -> bool {
    matches!(phase.wait_for(|p| *p != Phase::Early).await.map(|p| *p), Ok(Phase::Lost))
}

/// Resolves once JS aborted the request; registers the task's waker for every `ReqCtl` wake-up
/// (abort, resume, body data).
fn aborted(ctl: &ReqCtl) -> impl Future<Output = ()> + '_ {
    poll_fn(move |cx| {
        ctl.set_waker(cx.waker());
        if ctl.aborted() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
}

fn breach(b: Breach) -> Failure {
    (ErrorCode::from(b), b.message().to_string())
}

/// `fut` within `limit` (none, or zero: no limit); past it, the request fails with `b`.
async fn within<T>(
    limit: Option<Duration>,
    b: Breach,
    fut: impl Future<Output = T>,
) -> Result<T, Failure> {
    match limit.filter(|d| !d.is_zero()) {
        Some(d) => crate::driver::timer::timeout(d, fut).await.map_err(|_| breach(b)),
        None => Ok(fut.await),
    }
}

/// Sends the request body (whole, or as JS writes it) and ends the stream. `Stop::Aborted`: the
/// body's source failed.
async fn send_body(
    tx: &mut RequestStream<SendStream<Bytes>, Bytes>,
    body: Option<Bytes>,
    piped: Option<StreamLength>,
    pool: &Arc<dyn ConnOwner>,
    id: u32,
    ctl: &ReqCtl,
) -> Result<(), Stop> {
    let io = |e: StreamError| stop(&e, describe(&e));
    let Some(length) = piped else {
        if let Some(b) = body.filter(|b| !b.is_empty()) {
            tx.send_data(b).await.map_err(io)?;
        }
        return tx.finish().await.map_err(io);
    };
    let mismatch = || Stop::Failed(breach(Breach::LengthMismatch));
    let mut remaining = match length {
        StreamLength::Known(n) => Some(n),
        StreamLength::Chunked => None,
    };
    loop {
        let taken = poll_fn(|cx| {
            ctl.set_waker(cx.waker());
            let t = ctl.take_body();
            if t.chunks.is_empty() && !t.ended && !t.failed && !t.drained {
                Poll::Pending
            } else {
                Poll::Ready(t)
            }
        })
        .await;
        if taken.drained {
            pool.shared().emit(|w| w.empty(events::BODY_DRAIN, id));
        }
        for c in taken.chunks {
            if let Some(rem) = remaining.as_mut() {
                if c.len() as u64 > *rem {
                    return Err(mismatch());
                }
                *rem -= c.len() as u64;
            }
            tx.send_data(Bytes::from(c)).await.map_err(io)?;
        }
        if taken.failed {
            ctl.abort();
            return Err(Stop::Aborted);
        }
        if taken.ended {
            if remaining.is_some_and(|r| r > 0) {
                return Err(mismatch());
            }
            return tx.finish().await.map_err(io);
        }
    }
}

/// How a connection failure reaches JS (here, not in session.rs, so a stream needs nothing from
/// its session).
pub(crate) fn describe_connection(e: &ConnectionError) -> (ErrorCode, String) {
    use h3::quic::ConnectionErrorIncoming as In;
    let msg = match e {
        ConnectionError::Timeout => "HTTP/3: the connection timed out".to_string(),
        ConnectionError::Remote { 0: In::ApplicationClose { error_code }, .. } => {
            format!("HTTP/3: connection closed by the server with code {error_code:#x}")
        }
        ConnectionError::Remote { 0: In::Timeout, .. } => {
            "HTTP/3: the connection timed out".to_string()
        }
        other => format!("HTTP/3: {other:?}"),
    };
    (ErrorCode::Socket, msg)
}

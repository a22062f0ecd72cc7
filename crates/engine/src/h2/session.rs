//! One HTTP/2 session: a connection whose ALPN chose `h2`. It takes requests from its pool's queue
//! while it has stream capacity (the server's SETTINGS_MAX_CONCURRENT_STREAMS and the pool's
//! `max_concurrent_streams`), runs each as a stream task, and drives the connection itself, so
//! tearing the session down (destroy, a panic) closes the socket and every stream with it.
//!
//! GOAWAY ends the session for new work at once: the pool hears `disconnect` with
//! `HTTP/2: "GOAWAY" frame received` (and opens a new session for what is queued); streams the
//! server did not process (above the GOAWAY's last stream id, or REFUSED_STREAM) go back to the
//! queue once when their body can be sent again, the others run to their end. A session with no
//! stream open for `keepAliveTimeout` closes (a server's graceful close waits for it), and with
//! `pingInterval` a PING still unanswered when the next is due ends the session as unresponsive.
use super::counted::Counted;
use super::request;
use super::response::describe;
use super::stream::{Outcome, Signals, Stream};
use crate::conn::session::{idle_expired, End};
use crate::driver::task::tracked;
use crate::driver::Timer;
use crate::error::ErrorCode;
use crate::events;
use crate::owner::{ConnOwner, Resend, Taker};
use crate::request::{flags, Request, StreamLength};
use ::h2::client::{Connection, SendRequest};
use ::h2::{Ping, PingPong};
use bytes::Bytes;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinSet;
use tokio::time::Instant;

/// The message of the `disconnect` a GOAWAY causes (the spec's exact words).
pub const GOAWAY_MESSAGE: &str = "HTTP/2: \"GOAWAY\" frame received";
/// What the peer's stream limit reads as until its first SETTINGS frame arrives (no SETTINGS
/// value can be this large); that frame replaces it, with "no limit" when it names none.
const SETTINGS_PENDING: usize = usize::MAX - 1;
/// Why a session whose PING went unanswered was ended.
pub const UNRESPONSIVE: &str = "HTTP/2: connection unresponsive";

struct Session {
    pool: Arc<dyn ConnOwner>,
    conn_id: u64,
    authority: String,
    /// The connection's addresses, for SENT events of observed requests.
    addrs: String,
    send: SendRequest<Bytes>,
    streams: JoinSet<Outcome>,
    /// The server sent GOAWAY or the connection failed: no new streams; the pool was told.
    gone: Option<End>,
    ping: Option<(PingPong, Timer, bool)>,
    /// Armed while no stream is open: the session closes when it fires (`keepAliveTimeout`).
    idle: Option<Timer>,
    /// The pool was asked for another connection since the session last had room.
    asked_for_more: bool,
    /// Shared with every stream: the teardown reason, a GOAWAY seen (`stream::Signals`).
    signals: Arc<Signals>,
}

/// The HTTP/2 session (see `crate::conn::session`) over a connection whose ALPN chose h2 (or
/// h2c by prior knowledge): from the handshake until the last stream ended.
pub(crate) async fn run<T>(pool: Arc<dyn ConnOwner>, conn_id: u64, io: T, addrs: String) -> End
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let o = &pool.opts().h2;
    let mut builder = ::h2::client::Builder::new();
    builder
        .enable_push(false)
        .initial_max_send_streams(SETTINGS_PENDING)
        .initial_window_size(o.initial_window_size)
        .initial_connection_window_size(o.connection_window_size)
        .max_header_list_size(pool.opts().max_header_size.min(u32::MAX as usize) as u32);
    let signals = Arc::new(Signals { addrs: addrs.clone(), ..Signals::default() });
    let io = Counted::new(io, signals.clone());
    let (send, mut connection): (SendRequest<Bytes>, Connection<Counted<T>, Bytes>) =
        match builder.handshake(io).await {
            Ok(pair) => pair,
            Err(e) => {
                let (code, msg) = describe(&e);
                pool.connect_failed(conn_id, code, "", "", &msg);
                return failed(code, msg);
            }
        };
    let ping = match (pool.opts().h2.ping_interval, connection.ping_pong()) {
        (Some(every), Some(pp)) if !every.is_zero() => Some((pp, Timer::after(every), false)),
        _ => None,
    };
    pool.connected(conn_id, "h2", &addrs);
    let authority = match &pool.opts().target {
        crate::transport::Target::Tcp { host, port } if host.contains(':') => {
            format!("[{host}]:{port}")
        }
        crate::transport::Target::Tcp { host, port } => format!("{host}:{port}"),
        #[cfg(unix)]
        crate::transport::Target::Unix { .. } => "localhost".to_string(),
    };
    let mut session = Session {
        pool,
        conn_id,
        authority,
        addrs,
        send,
        streams: JoinSet::new(),
        gone: None,
        ping,
        idle: None,
        asked_for_more: false,
        signals,
    };
    let mut connection = Some(connection);
    poll_fn(|cx| session.poll(cx, &mut connection)).await;
    session.gone.take().unwrap_or(End::Clean("HTTP/2 session closed"))
}

fn failed(code: ErrorCode, message: String) -> End {
    End::Failed { code, errno: "", message }
}

/// The server's GOAWAY: no new streams on this session.
fn goaway() -> End {
    End::Clean(GOAWAY_MESSAGE)
}

impl Session {
    /// `connection` is None once its future finished (the socket is closed).
    fn poll<T>(
        &mut self,
        cx: &mut Context<'_>,
        connection: &mut Option<Connection<T, Bytes>>,
    ) -> Poll<()>
    where
        T: AsyncRead + AsyncWrite + Unpin,
    {
        if let Some(conn) = connection.as_mut() {
            if let Poll::Ready(res) = Pin::new(conn).poll(cx) {
                let end = match res {
                    // A graceful GOAWAY ends the connection cleanly once its streams are done; the
                    // handle still reports it, and the pool must hear that it was a GOAWAY.
                    Ok(()) => match self.send.poll_ready(cx) {
                        Poll::Ready(Err(e)) if e.is_go_away() && e.is_remote() => goaway(),
                        _ => End::Clean("HTTP/2 session closed"),
                    },
                    Err(e) if e.is_go_away() && e.is_remote() => goaway(),
                    Err(e) => {
                        let (code, msg) = describe(&e);
                        failed(code, msg)
                    }
                };
                // Dropped at once: h2 tells the streams still waiting for their response that
                // the connection ended when it drops it, not on every error it returns (a failed
                // write is returned without a word to them), and nothing drives it from here on.
                *connection = None;
                self.go(end);
            }
        }
        self.reap(cx);
        if self.gone.is_none() {
            self.take_work(cx);
        }
        if self.poll_ping(cx) {
            // Dropping the session drops its connection and its streams, which fail with why.
            return Poll::Ready(());
        }
        if self.gone.is_some() {
            // Streams already under way run to their end (or fail with the connection).
            return if self.streams.is_empty() { Poll::Ready(()) } else { Poll::Pending };
        }
        if self.streams.is_empty() && self.pool.finished() {
            self.go(End::Clean("closed"));
            return Poll::Ready(());
        }
        if idle_expired(&*self.pool, !self.streams.is_empty(), &mut self.idle, cx) {
            self.go(End::Clean("socket idle timeout"));
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Collects finished streams; refused ones go back to the pool's queue.
    fn reap(&mut self, cx: &mut Context<'_>) {
        let (mut refused, mut why) = (Vec::new(), Vec::new());
        while let Poll::Ready(Some(res)) = self.streams.poll_join_next(cx) {
            if let Ok(Outcome::Unprocessed(req, code, msg)) = res {
                why.push((req.id, code, msg));
                refused.push(*req);
            }
            // A panicked stream task failed its request from its Drop.
        }
        if self.signals.goaway.load(Ordering::Relaxed) {
            // Before the requests go back to the queue: the pool must not hand them to this session.
            self.go(goaway());
        }
        if refused.is_empty() {
            return;
        }
        let pool = self.pool.clone();
        let fail: Vec<_> = {
            let over = pool.requeue(refused, Resend::Refused);
            why.into_iter().filter(|(id, _, _)| over.iter().any(|r| r.id == *id)).collect()
        };
        if !fail.is_empty() {
            let socket = self.signals.socket_info();
            pool.shared().emit(|w| {
                for (id, code, msg) in &fail {
                    let socket = if *code == ErrorCode::Socket { socket.as_str() } else { "" };
                    w.socket_error(events::ERROR, *id, *code, "", socket, msg);
                }
            });
            for (id, _, _) in &fail {
                pool.shared().forget(*id);
            }
        }
        pool.kick();
    }

    /// Opens streams for queued requests while the session has room.
    fn take_work(&mut self, cx: &mut Context<'_>) {
        loop {
            // Until the server's SETTINGS say how many streams it takes, one (as undici): a server
            // with a low limit would refuse the rest. Processing its SETTINGS wakes the session.
            let max = self.max_streams();
            if self.streams.len() >= max.unwrap_or(1) {
                // A finishing stream wakes the session through the join set. Work still queued
                // may go to another connection meanwhile (the pool's limit permitting).
                if max.is_some() && !std::mem::replace(&mut self.asked_for_more, true) {
                    self.pool.kick();
                }
                return;
            }
            self.asked_for_more = false;
            match self.send.poll_ready(cx) {
                Poll::Pending => return,
                Poll::Ready(Err(e)) => {
                    let end = if e.is_go_away() && e.is_remote() {
                        goaway()
                    } else {
                        let (code, msg) = describe(&e);
                        failed(code, msg)
                    };
                    return self.go(end);
                }
                Poll::Ready(Ok(())) => {}
            }
            let Some(req) = self.next_request(cx) else { return };
            self.start(req);
        }
    }

    /// Streams open at once at most: the pool's `maxConcurrentStreams`, lowered (never raised)
    /// by the server's SETTINGS_MAX_CONCURRENT_STREAMS, as undici has it.
    /// None until the server's first SETTINGS arrived.
    fn max_streams(&self) -> Option<usize> {
        let local = match self.pool.opts().h2.max_concurrent_streams {
            0 => usize::MAX,
            n => n as usize,
        };
        let remote = self.send.current_max_send_streams();
        (remote != SETTINGS_PENDING).then(|| local.min(remote))
    }

    /// The next request this session may take; registers for a wake-up when there is none.
    fn next_request(&mut self, cx: &mut Context<'_>) -> Option<Request> {
        let mut one = TakeOne(None);
        self.pool.take(self.conn_id, cx.waker(), &mut one);
        one.0
    }

    fn start(&mut self, req: Request) {
        let pool = self.pool.clone();
        let fail = |req: &Request, msg: &str| {
            let id = req.id;
            pool.shared().forget(id);
            pool.shared().emit(|w| w.error(events::ERROR, id, ErrorCode::InvalidArgument, "", msg));
        };
        if req.has(flags::UPGRADE) {
            return fail(&req, "upgrade is not supported over HTTP/2");
        }
        let piped = req.has(flags::STREAM_BODY).then_some(match req.stream_length {
            StreamLength::Known(n) => Some(n),
            StreamLength::Chunked => None,
        });
        let length = match (&piped, &req.body) {
            (Some(known), _) => *known,
            (None, Some(b)) => Some(b.len() as u64),
            (None, None) => None,
        };
        let expect = req.has(flags::EXPECT_CONTINUE) && length.is_none_or(|n| n > 0);
        // h2c (prior knowledge) runs only to http: origins; any other h2 is https.
        let scheme = if self.pool.opts().h2.prior_knowledge { "http" } else { "https" };
        let head = match request::build(&req.head, scheme, &self.authority, length, expect) {
            Ok(h) => h,
            Err(e) => return fail(&req, &e.to_string()),
        };
        let end_of_stream = piped.is_none() && req.body.as_ref().is_none_or(|b| b.is_empty());
        match self.send.send_request(head.request, end_of_stream) {
            Ok((response, send)) => {
                if req.has(flags::OBSERVE) {
                    let id = req.id;
                    pool.shared().emit(|w| w.bytes(events::SENT, id, self.addrs.as_bytes()));
                }
                let mut stream = Stream::new(
                    self.pool.clone(),
                    req,
                    response,
                    send,
                    head.head_method,
                    piped,
                    expect,
                );
                stream.signals = self.signals.clone();
                self.streams.spawn(tracked(async move { poll_fn(|cx| stream.poll(cx)).await }));
            }
            Err(e) => {
                let (code, msg) = describe(&e);
                let id = req.id;
                // Not sent: the request may go to the next session (which GOAWAY handling opens).
                if e.is_go_away() && pool.requeue(vec![req], Resend::Refused).is_empty() {
                    return self.go(goaway());
                }
                pool.shared().forget(id);
                pool.shared().emit(|w| w.error(events::ERROR, id, code, "", &msg));
            }
        }
    }

    /// Keep-alive PINGs at `ping_interval`, one outstanding at a time. A PING still unanswered
    /// when the next is due means the peer is gone (a NAT dropped the connection, a hung server):
    /// the session ends, its streams failing with `UNRESPONSIVE`, as undici's watchdog does.
    /// True when the session must be dropped now.
    fn poll_ping(&mut self, cx: &mut Context<'_>) -> bool {
        let Some((pp, timer, waiting)) = self.ping.as_mut() else { return false };
        if *waiting {
            match pp.poll_pong(cx) {
                Poll::Ready(Ok(_)) => *waiting = false,
                Poll::Ready(Err(_)) => {
                    self.ping = None;
                    return false;
                }
                Poll::Pending => {}
            }
        }
        if timer.as_mut().poll(cx).is_pending() {
            return false;
        }
        if *waiting {
            let _ = self.signals.teardown.set((ErrorCode::Socket, UNRESPONSIVE.to_string()));
            self.go(failed(ErrorCode::Socket, UNRESPONSIVE.to_string()));
            return true;
        }
        let every = self.pool.opts().h2.ping_interval.unwrap_or_default();
        timer.as_mut().reset(Instant::now() + every);
        let _ = timer.as_mut().poll(cx);
        if pp.send_ping(Ping::opaque()).is_ok() {
            *waiting = true;
        }
        false
    }

    /// The session takes no more work: the pool hears `disconnect` now, so queued requests get a
    /// new session while the streams under way finish here.
    fn go(&mut self, end: End) {
        if self.gone.is_some() {
            return;
        }
        let (code, _, msg) = end.cause();
        self.gone = Some(end);
        self.pool.disconnected(self.conn_id, code, &msg, &self.signals.socket_info());
    }
}

/// A session takes one request at a time (it checks for stream capacity between them).
pub(crate) struct TakeOne(pub(crate) Option<Request>);
impl Taker for TakeOne {
    fn wants_more(&self) -> bool {
        self.0.is_none()
    }
    fn admits(&self, _next: &Request) -> bool {
        true
    }
    fn submit(&mut self, req: Request) {
        self.0 = Some(req);
    }
}

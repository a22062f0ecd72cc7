//! One HTTP/3 connection: a QUIC connection whose ALPN is `h3`. It takes requests from its pool's
//! queue up to `maxConcurrentStreams` (quinn holds streams beyond the server's limit until one
//! closes), runs each as a stream task, and drives the connection's control stream itself.
//!
//! The server's GOAWAY is noticed as the driver reads it (h3 marks the connection closing): the
//! session then takes no more work and the pool hears `disconnect` (so queued and new requests get
//! a new connection) while streams under way finish. A stream that raced it (it failed to open as
//! the connection was closing) goes back to the queue. A session with no stream
//! open for `keepAliveTimeout` closes, as an idle h1 / h2 connection does.
use super::setup::{h3_over, Driver};
use super::stream::{describe_connection as describe, Failure, Outcome, Signals, Stream};
use super::zero_rtt::{Early, PhaseRx, Step, ZeroRtt};
use crate::conn::session::{fail_torn_down, idle_expired};
use crate::driver::task::tracked;
use crate::driver::Timer;
use crate::error::ErrorCode;
use crate::events;
use crate::h2::request::{build, H2HeadError};
use crate::h2::session::TakeOne;
use crate::owner::{ConnOwner, Resend};
use crate::request::{flags, Request, StreamLength};
use bytes::Bytes;
use h3::client::SendRequest;
use h3_quinn::OpenStreams;
use quinn::{Connection, Endpoint, VarInt};
use std::future::poll_fn;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::task::JoinSet;

/// The message of the `disconnect` the server's GOAWAY causes.
pub(super) const GOAWAY_MESSAGE: &str = "HTTP/3: \"GOAWAY\" frame received";
/// H3_NO_ERROR: how the client closes a connection it is done with.
const NO_ERROR: u32 = 0x100;

struct Session {
    pool: Arc<dyn ConnOwner>,
    conn_id: u64,
    authority: String,
    send: SendRequest<OpenStreams, Bytes>,
    streams: JoinSet<Outcome>,
    /// The session takes no more work; the pool was told.
    gone: bool,
    idle: Option<Timer>,
    asked_for_more: bool,
    signals: Arc<Signals>,
    /// A connection started in 0-RTT (`zero_rtt.rs`).
    zero_rtt: Option<ZeroRtt>,
    conn: Connection,
    max_field: u64,
}

pub(crate) async fn run(
    pool: Arc<dyn ConnOwner>,
    conn_id: u64,
    endpoint: Endpoint,
    conn: Connection,
    addrs: String,
    early: Option<Early>,
) {
    let max_field = pool.opts().max_header_size as u64;
    let (driver, send) = match h3_over(conn.clone(), max_field).await {
        Ok(pair) => pair,
        Err(e) => {
            let (code, msg) = describe(&e);
            return pool.connect_failed(conn_id, code, "", "", &msg);
        }
    };
    pool.connected(conn_id, "h3", &addrs);
    let authority = match &pool.opts().target {
        crate::transport::Target::Tcp { host, port }
            if host.contains(':') && !host.starts_with('[') =>
        {
            format!("[{host}]:{port}")
        }
        crate::transport::Target::Tcp { host, port } => format!("{host}:{port}"),
        #[cfg(unix)]
        crate::transport::Target::Unix { .. } => "localhost".to_string(),
    };
    let route = pool.opts().h3.as_ref().map(|h| h.route.clone());
    let mut session = Session {
        pool,
        conn_id,
        authority,
        send,
        streams: JoinSet::new(),
        gone: false,
        idle: None,
        asked_for_more: false,
        signals: Arc::new(Signals { addrs, ..Signals::default() }),
        zero_rtt: early.map(|e| ZeroRtt::new(e, route)),
        conn: conn.clone(),
        max_field,
    };
    let mut driver = Some(driver);
    poll_fn(|cx| session.poll(cx, &mut driver)).await;
    conn.close(VarInt::from_u32(NO_ERROR), b"");
    drop(driver);
    // Lets the CONNECTION_CLOSE leave before the socket goes, without holding the task up.
    let _ = crate::driver::timer::timeout(Duration::from_millis(100), endpoint.wait_idle()).await;
}

impl Session {
    fn poll(&mut self, cx: &mut Context<'_>, driver: &mut Option<Driver>) -> Poll<()> {
        self.handshake(cx, driver);
        if let Some(d) = driver.as_mut() {
            if let Poll::Ready(e) = d.poll_close(cx) {
                *driver = None;
                self.ended(&e);
            } else if send_closing(&self.send) {
                self.go(ErrorCode::Info, GOAWAY_MESSAGE);
            }
        }
        self.reap(cx);
        if !self.gone {
            self.take_work(cx);
        }
        if self.gone {
            return if self.streams.is_empty() { Poll::Ready(()) } else { Poll::Pending };
        }
        let busy =
            !self.streams.is_empty() || self.zero_rtt.as_ref().is_some_and(|z| z.holding() > 0);
        if !busy && self.pool.finished() {
            self.go(ErrorCode::Info, "closed");
            return Poll::Ready(());
        }
        if idle_expired(&*self.pool, busy, &mut self.idle, cx) {
            self.go(ErrorCode::Info, "socket idle timeout");
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// The connection ended (`e`): what streams still open fail with, and the pool is told.
    fn ended(&mut self, e: &h3::error::ConnectionError) {
        let (code, msg) = if e.is_h3_no_error() {
            (ErrorCode::Info, "HTTP/3 connection closed".to_string())
        } else {
            describe(e)
        };
        let failure = if code == ErrorCode::Info {
            (ErrorCode::Socket, "other side closed".to_string())
        } else {
            (code, msg.clone())
        };
        let _ = self.signals.teardown.set(failure);
        self.go(code, &msg);
    }

    /// A 0-RTT connection's handshake ending: early data rejected means a new HTTP/3 connection
    /// over the QUIC one (the old one is never polled again).
    fn handshake(&mut self, cx: &mut Context<'_>, driver: &mut Option<Driver>) {
        let Some(z) = self.zero_rtt.as_mut() else { return };
        while let Poll::Ready(step) = z.poll(cx, &self.conn, self.max_field) {
            match step {
                Step::Rejected => *driver = None,
                Step::TimedOut => {
                    // What the early requests fail with when they have nowhere else to go.
                    let timeout = (ErrorCode::ConnectTimeout, "Connect Timeout Error".to_string());
                    let _ = self.signals.teardown.set(timeout);
                }
                Step::Rebuilt(built) => match *built {
                    Ok((d, send)) => {
                        *driver = Some(d);
                        self.send = send;
                    }
                    Err(e) => return self.ended(&e),
                },
                Step::Other => {}
            }
        }
    }

    /// Collects finished streams; one the server's GOAWAY turned away goes back to the queue, an
    /// early one to be sent again waits in `zero_rtt`.
    fn reap(&mut self, cx: &mut Context<'_>) {
        let mut retry = Vec::new();
        while let Poll::Ready(Some(res)) = self.streams.poll_join_next(cx) {
            match (res, self.zero_rtt.as_mut()) {
                (Ok(Outcome::Unprocessed(req, failure)), _) => retry.push((req, failure)),
                (Ok(Outcome::Replay(req)), Some(z)) => z.replay(req),
                (Ok(Outcome::Replay(req)), None) => retry.push((req, goaway())),
                // A panicked stream task failed its request from its Drop.
                _ => {}
            }
        }
        if self.signals.goaway.load(Ordering::Relaxed) {
            // Before the requests go back: the pool must not hand them to this session again.
            self.go(ErrorCode::Info, GOAWAY_MESSAGE);
        }
        if self.gone {
            self.flush_held();
        }
        self.give_back(retry);
    }

    /// Requests held for the handshake, the session ending: back to the pool, or failed with the
    /// connection's error when it failed and the requests have nowhere else to go.
    fn flush_held(&mut self) {
        let Some(z) = self.zero_rtt.as_mut() else { return };
        let (held, fallback) = z.take_held();
        match self.signals.teardown.get().filter(|_| !fallback) {
            Some(failure) => {
                for r in held {
                    fail_torn_down(&*self.pool, &r.ctl, r.id, failure.clone(), "");
                }
            }
            None => self.give_back(held.into_iter().map(|r| (r, goaway())).collect()),
        }
    }

    /// Requests this connection did not send, or the server did not process, go back to the
    /// queue.
    fn give_back(&mut self, retry: Vec<(Request, Failure)>) {
        if retry.is_empty() {
            return;
        }
        let pool = self.pool.clone();
        let (reqs, mut why): (Vec<Request>, Vec<(u32, Failure)>) = retry
            .into_iter()
            .map(|(r, f)| {
                let id = r.id;
                (r, (id, f))
            })
            .unzip();
        // RETRY is told by the pool; what its cap turns away fails as the server's refusal.
        let over = pool.requeue(reqs, Resend::Refused);
        why.retain(|(id, _)| over.iter().any(|r| r.id == *id));
        for (id, _) in &why {
            pool.shared().forget(*id);
        }
        pool.shared().emit(|w| {
            for (id, (code, msg)) in &why {
                w.error(events::ERROR, *id, *code, "", msg);
            }
        });
        pool.kick();
    }

    fn take_work(&mut self, cx: &mut Context<'_>) {
        if let Some(z) = self.zero_rtt.as_mut() {
            for req in z.release() {
                self.start(req, None);
            }
        }
        let max = match self.pool.opts().h3.as_ref().map_or(100, |o| o.max_concurrent_streams) {
            0 => usize::MAX,
            n => n as usize,
        };
        loop {
            let held = self.zero_rtt.as_ref().map_or(0, |z| z.holding());
            if self.streams.len() + held >= max {
                if !std::mem::replace(&mut self.asked_for_more, true) {
                    self.pool.kick();
                }
                return;
            }
            self.asked_for_more = false;
            let mut one = TakeOne(None);
            self.pool.take(self.conn_id, cx.waker(), &mut one);
            let Some(req) = one.0 else { return };
            let (req, early) = match self.zero_rtt.as_mut() {
                Some(z) => match z.admit(req) {
                    Some(go) => go,
                    None => continue,
                },
                None => (req, None),
            };
            self.start(req, early);
        }
    }

    /// `early`: the request goes in 0-RTT early data (the handshake's phase, for its stream).
    fn start(&mut self, req: Request, early: Option<PhaseRx>) {
        let refuse = |pool: &Arc<dyn ConnOwner>, req: &Request, msg: &str| {
            let id = req.id;
            pool.shared().forget(id);
            pool.shared().emit(|w| w.error(events::ERROR, id, ErrorCode::InvalidArgument, "", msg));
        };
        if req.has(flags::UPGRADE) {
            return refuse(&self.pool, &req, "upgrade is not supported over HTTP/3");
        }
        let length = if req.has(flags::STREAM_BODY) {
            match req.stream_length {
                StreamLength::Known(n) => Some(n),
                StreamLength::Chunked => None,
            }
        } else {
            req.body.as_ref().map(|b| b.len() as u64)
        };
        // As over h2: the body waits for the server's 100 (a bodiless request sends no expect).
        let expect = req.has(flags::EXPECT_CONTINUE) && length.is_none_or(|n| n > 0);
        let head = match build(&req.head, "https", &self.authority, length, expect) {
            Ok(h) => h,
            Err(H2HeadError::Connect) => {
                return refuse(&self.pool, &req, "CONNECT is not supported over HTTP/3")
            }
            Err(e) => return refuse(&self.pool, &req, &e.to_string()),
        };
        let stream = Stream::new(self.pool.clone(), &req, self.signals.clone());
        let send = self.send.clone();
        let run = stream.run(req, send, head.request, head.head_method, expect, early);
        self.streams.spawn(tracked(run));
    }

    /// The session takes no more work: the pool hears `disconnect` now, so queued requests get a
    /// new connection while the streams under way finish here.
    fn go(&mut self, code: ErrorCode, msg: &str) {
        if std::mem::replace(&mut self.gone, true) {
            return;
        }
        self.pool.disconnected(self.conn_id, code, msg, "");
        self.flush_held();
    }
}

/// What a request the GOAWAY turned away fails with when it cannot go again.
fn goaway() -> Failure {
    (ErrorCode::Socket, GOAWAY_MESSAGE.to_string())
}

/// Whether the driver has read the server's GOAWAY (h3 0.0.8 surfaces it only through this flag,
/// or as `RemoteClosing` from the next `send_request`).
fn send_closing(send: &SendRequest<OpenStreams, Bytes>) -> bool {
    h3::ConnectionState::is_closing(send)
}

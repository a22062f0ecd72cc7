//! 0-RTT (`h3Options.zeroRtt`; RFC 9001 §4.6, RFC 8470): a connection resuming a TLS session
//! sends requests before its handshake completes, in early data, which an attacker can replay.
//! So only safe requests without a body go early (RFC 8470 §4.1: a client MUST NOT send unsafe
//! methods in early data; a body would be replayed with its request); the others the session
//! holds until the handshake completes. An early request comes back to the session when:
//! - the server rejected early data (the connection lives on): quinn forgets every stream opened
//!   before, h3's control streams too, so the session builds a new HTTP/3 connection on the same
//!   QUIC connection and sends the request there;
//! - the server answered 425 (Too Early): it is sent again once after the handshake, and the 425
//!   is never seen (RFC 8470 §5.2);
//! - the handshake failed, or to an Alt-Svc endpoint did not complete within the race window:
//!   the request goes back to the pool (over TCP, the endpoint marked broken), or with prior
//!   knowledge fails with the connection's error.
use super::route::Route;
use super::setup::{h3_over, Built};
use crate::driver::Timer;
use crate::request::{flags, Request};
use quinn::{Connection, VarInt, ZeroRttAccepted};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The handshake as an early request sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Early,
    /// The server took the early data: an early request's outcome is its own.
    Accepted,
    /// Rejected or failed: an early request that did not complete comes back to the session.
    Lost,
}

pub(crate) type PhaseRx = watch::Receiver<Phase>;

/// A connection's early start, from the attempt: quinn's verdict on its early data, how long the
/// handshake may take (the race window of an Alt-Svc endpoint, else `connectTimeout`), and
/// whether its requests may then go over TCP (`fallback`: an Alt-Svc endpoint).
pub(crate) struct Early {
    pub accepted: ZeroRttAccepted,
    pub limit: Option<Duration>,
    pub fallback: bool,
}

/// Whether `req` may go in early data: a safe method (RFC 9110 §9.2.1), no body, no
/// `expect: 100-continue`, no upgrade.
pub(crate) fn may_go_early(req: &Request) -> bool {
    const SAFE: [&[u8]; 4] = [b"GET", b"HEAD", b"OPTIONS", b"TRACE"];
    SAFE.contains(&req.head.method())
        && !req.has(flags::STREAM_BODY | flags::EXPECT_CONTINUE | flags::UPGRADE)
        && req.body.as_ref().is_none_or(|b| b.is_empty())
}

type Rebuild = Pin<Box<dyn Future<Output = Built> + Send>>;

enum State {
    /// The handshake goes on; `deadline`: the race window of an Alt-Svc endpoint.
    Early(ZeroRttAccepted, Option<Timer>),
    /// Early data was rejected: a new HTTP/3 connection is being set up on the QUIC connection.
    Rebuilding(Rebuild),
    Open,
    Failed,
}

/// What the handshake's end means for the session.
pub(super) enum Step {
    /// Early data was rejected and HTTP/3 runs again over the connection: the session's new
    /// driver and request sender.
    Rebuilt(Box<Built>),
    /// Early data was rejected: the old HTTP/3 connection must not be polled again (it would
    /// take the server's new control stream).
    Rejected,
    /// The handshake took longer than its limit: the connection was closed.
    TimedOut,
    Other,
}

/// A session's 0-RTT state, from its start until it ends.
pub(super) struct ZeroRtt {
    state: State,
    phase: watch::Sender<Phase>,
    /// Requests waiting for the handshake: taken while it went on, or come back to be sent again.
    held: Vec<Request>,
    /// An Alt-Svc endpoint's route (marked broken when the handshake fails).
    route: Option<Arc<Route>>,
}

impl ZeroRtt {
    pub(super) fn new(early: Early, route: Option<Arc<Route>>) -> ZeroRtt {
        let deadline = early.limit.filter(|d| !d.is_zero()).map(Timer::after);
        ZeroRtt {
            state: State::Early(early.accepted, deadline),
            phase: watch::Sender::new(Phase::Early),
            held: Vec::new(),
            route: route.filter(|_| early.fallback),
        }
    }

    /// Requests held.
    pub(super) fn holding(&self) -> usize {
        self.held.len()
    }

    /// A request from the queue: `Some` to start now (with the handshake's phase when it goes in
    /// early data), `None` when it waits for the handshake.
    pub(super) fn admit(&mut self, req: Request) -> Option<(Request, Option<PhaseRx>)> {
        match self.state {
            State::Open => Some((req, None)),
            State::Early(..) if may_go_early(&req) => Some((req, Some(self.phase.subscribe()))),
            _ => {
                self.held.push(req);
                None
            }
        }
    }

    /// An early request that must be sent again (after the handshake).
    pub(super) fn replay(&mut self, req: Request) {
        self.held.push(req);
    }

    /// The held requests that may go now (the handshake is complete).
    pub(super) fn release(&mut self) -> Vec<Request> {
        match self.state {
            State::Open => std::mem::take(&mut self.held),
            _ => Vec::new(),
        }
    }

    /// Every held request, the session ending; `fallback`: they may go to another connection.
    pub(super) fn take_held(&mut self) -> (Vec<Request>, bool) {
        (std::mem::take(&mut self.held), self.route.is_some())
    }

    /// Drives the handshake's end; `conn` is the QUIC connection.
    pub(super) fn poll(
        &mut self,
        cx: &mut Context<'_>,
        conn: &Connection,
        max_field: u64,
    ) -> Poll<Step> {
        match &mut self.state {
            State::Early(accepted, deadline) => {
                let timed_out = deadline.as_mut().is_some_and(|t| Pin::new(t).poll(cx).is_ready());
                if timed_out {
                    // The endpoint does not answer: the early requests go over TCP, or fail.
                    conn.close(VarInt::from_u32(0), b"");
                    self.fail();
                    return Poll::Ready(Step::TimedOut);
                }
                let Poll::Ready(took) = Pin::new(accepted).poll(cx) else { return Poll::Pending };
                if took {
                    self.state = State::Open;
                    self.phase.send_replace(Phase::Accepted);
                    return Poll::Ready(Step::Other);
                }
                if conn.close_reason().is_some() {
                    self.fail();
                    return Poll::Ready(Step::Other);
                }
                self.phase.send_replace(Phase::Lost);
                self.state = State::Rebuilding(Box::pin(h3_over(conn.clone(), max_field)));
                Poll::Ready(Step::Rejected)
            }
            State::Rebuilding(rebuild) => {
                let built = std::task::ready!(rebuild.as_mut().poll(cx));
                self.state = if built.is_ok() { State::Open } else { State::Failed };
                Poll::Ready(Step::Rebuilt(Box::new(built)))
            }
            State::Open | State::Failed => Poll::Pending,
        }
    }

    fn fail(&mut self) {
        self.state = State::Failed;
        self.phase.send_replace(Phase::Lost);
        if let Some(route) = &self.route {
            route.broken(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Limits, StreamLength};

    fn req(head: &'static str, body: Option<&[u8]>, flags: u32) -> Request {
        Request {
            id: 1,
            head: head.into(),
            body: body.map(<[u8]>::to_vec),
            stream_length: StreamLength::Chunked,
            flags,
            limits: Limits::default(),
            ctl: Arc::default(),
            retries: 0,
        }
    }

    #[test]
    fn only_safe_requests_without_a_body_go_early() {
        for m in ["GET", "HEAD", "OPTIONS", "TRACE"] {
            let head: &'static str = Box::leak(format!("{m}\0/").into_boxed_str());
            assert!(may_go_early(&req(head, None, 0)), "{m}");
            assert!(may_go_early(&req(head, Some(b""), 0)), "{m} with an empty body");
            assert!(!may_go_early(&req(head, Some(b"x"), 0)), "{m} with a body");
        }
        for m in ["POST", "PUT", "DELETE", "PATCH", "CONNECT"] {
            let head: &'static str = Box::leak(format!("{m}\0/").into_boxed_str());
            assert!(!may_go_early(&req(head, None, flags::IDEMPOTENT)), "{m}");
        }
        for f in [flags::STREAM_BODY, flags::EXPECT_CONTINUE, flags::UPGRADE] {
            assert!(!may_go_early(&req("GET\0/", None, f)), "flag {f}");
        }
    }
}

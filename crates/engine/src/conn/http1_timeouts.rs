//! The timeouts of an HTTP/1.1 session (`http1.rs`): headers, body and keep-alive, served by one
//! timer whose deadline follows the front of the pipeline.
use super::{End, Http1};
use crate::request::Breach;
use std::future::Future;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;

impl Http1 {
    /// Keep-alive for the next idle period: the server's hint minus the threshold, capped.
    pub(super) fn keep_alive_for(&self, hint_ms: Option<u64>) -> Duration {
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
    pub(super) fn poll_timer(&mut self, cx: &mut Context<'_>) -> Option<End> {
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
        match self.pipe.inflight.front() {
            None => {
                if self.keep_alive.is_zero() {
                    return (Some(self.mark), End::Clean("socket idle timeout"));
                }
                (Some(self.mark + self.keep_alive), End::Clean("socket idle timeout"))
            }
            Some(f) if f.req.ctl.paused() => (None, End::Clean("")),
            Some(f) if !f.head_done => {
                let body_pending = self.pipe.streaming.as_ref().is_some_and(|s| s.id == f.req.id);
                if self.pipe.unwritten == self.pipe.inflight.len() || body_pending {
                    return (None, End::Clean(""));
                }
                match f.req.limits.headers_timeout {
                    Some(t) => (Some(self.mark + t), End::breach(Breach::HeadersTimeout)),
                    None => (None, End::Clean("")),
                }
            }
            Some(f) => match f.req.limits.body_timeout {
                Some(t) => (Some(self.mark + t), End::breach(Breach::BodyTimeout)),
                None => (None, End::Clean("")),
            },
        }
    }
}

//! The read side of the HTTP/1.1 session (`http1.rs`): bytes from the socket through the decoder
//! into events for JS, with the checks that a response belongs to the request at the head of the
//! pipeline, and what the peer's end of the stream means.

use super::Http1;
use crate::conn::session::End;
use crate::error::ErrorCode;
use crate::events::Writer;
use crate::h1::Decoded;
use crate::request::flags;
use std::task::{Context, Poll};
use tokio::time::Instant;

/// With the `test-hooks` feature only: a request for this path makes its connection task panic
/// when the response head arrives, so tests can show a panic fails that connection's requests and
/// nothing else (`__test__/engine-panic.test.ts`).
#[cfg(feature = "test-hooks")]
const PANIC_TEST_PATH: &str = "/__ferro_test_panic__";

impl Http1 {
    pub(super) fn read(&mut self, cx: &mut Context<'_>) -> Result<bool, End> {
        match self.bufs.read(&mut self.io, cx) {
            Poll::Pending => Ok(false),
            Poll::Ready(Err(e)) => Err(End::io(e)),
            Poll::Ready(Ok(0)) => Err(self.on_eof()),
            Poll::Ready(Ok(n)) => {
                self.read_total += n as u64;
                self.on_bytes()?;
                Ok(true)
            }
        }
    }

    /// Decodes everything buffered and hands the events to JS in one batch. What it decodes
    /// arrived together: one clock read stamps its events and marks the session's progress.
    pub(super) fn on_bytes(&mut self) -> Result<(), End> {
        let shared = self.shared.clone();
        let mut result = Ok(());
        let mut done = std::mem::take(&mut self.done);
        let now = Instant::now();
        let stamp = crate::timings::stamp(now.into_std());
        shared.write_events(&mut |q| {
            let mut w = Writer::at(q, stamp);
            result = self.decode_into(&mut w, &mut done, now);
        });
        for id in done.drain(..) {
            self.shared.forget(id);
        }
        self.done = done;
        result
    }

    fn decode_into(
        &mut self,
        w: &mut Writer<'_>,
        done: &mut Vec<u32>,
        now: Instant,
    ) -> Result<(), End> {
        loop {
            if self.pipe.inflight.front().is_some_and(|f| f.req.ctl.paused()) {
                // Leave the rest buffered until JS resumes. Decoding resumes then even with an
                // empty buffer: the decoder may still owe an item that needs no more bytes (the
                // End right after a Content-Length body's last Data).
                self.undecoded = true;
                return Ok(());
            }
            let item = match self.decoder.decode(&mut self.bufs.rbuf) {
                Ok(Some(item)) => item,
                Ok(None) => break,
                // With no request waiting, whatever the bytes were, nobody asked for them.
                Err(_) if self.pipe.inflight.is_empty() => return Err(unsolicited()),
                Err(e) => {
                    return Err(End::Failed {
                        code: ErrorCode::from_decode(&e),
                        errno: "",
                        message: e.to_string(),
                    })
                }
            };
            let Some(front) = self.pipe.inflight.front_mut() else {
                return Err(unsolicited());
            };
            if !front.started {
                // Its response begins here: it must not have been read before the request went out.
                let head = match &item {
                    Decoded::Head(h) | Decoded::Upgrade(h) => h.headers.block.len(),
                    _ => 0,
                };
                let began = self.read_total - (self.bufs.rbuf.len() + head) as u64;
                if front.sent_at.is_none_or(|sent| began < sent) {
                    return Err(unsolicited());
                }
            }
            front.started = true;
            let id = front.req.id;
            match item {
                Decoded::Head(head) => {
                    #[cfg(feature = "test-hooks")]
                    if front.req.head.path() == PANIC_TEST_PATH.as_bytes() {
                        panic!("ferro test hook: a connection task panics");
                    }
                    w.head(id, &head, &front.req.ctl.timings);
                    if head.status >= 200 {
                        front.head_done = true;
                        self.pipe.blocked = false;
                        self.mark = now;
                        if !head.keep_alive {
                            self.pipe.no_reuse = true;
                        }
                        self.keep_alive = self.keep_alive_for(head.keep_alive_timeout_ms);
                        if head.keep_alive_timeout_ms.is_some() && self.keep_alive.is_zero() {
                            // The server drops the socket before the threshold would let us use it.
                            self.pipe.no_reuse = true;
                        }
                    }
                    self.decoder.recycle(head.headers);
                }
                Decoded::Data(chunk) => {
                    front.body_bytes += chunk.len() as u64;
                    front.req.limits.check_received(front.body_bytes).map_err(End::breach)?;
                    self.mark = now;
                    w.data(id, chunk);
                }
                Decoded::End { trailers } => {
                    w.end(id, trailers.as_ref());
                    if self.pipe.streaming.as_ref().is_some_and(|s| s.id == id) {
                        // Answered before its body was all sent: the rest can't follow on this connection.
                        self.pipe.streaming = None;
                        self.pipe.no_reuse = true;
                    }
                    self.pipe.inflight.pop_front();
                    done.push(id);
                    self.mark = now;
                }
                Decoded::Upgrade(head) => {
                    if front.req.has(flags::WEBSOCKET) {
                        // Before JS can see the 101: nothing is read until it says how to go on.
                        front.req.ctl.hold_for_websocket();
                    }
                    w.upgrade(id, &head, &self.addrs);
                    let Some(f) = self.pipe.inflight.pop_front() else {
                        return Ok(());
                    };
                    self.pipe.streaming = None;
                    self.pipe.no_reuse = true;
                    // Bytes the server sent right behind the head stay in `rbuf`: they are the
                    // new protocol's (`Upgraded::bufs`).
                    self.upgraded = Some((id, f.req.ctl));
                    return Ok(());
                }
            }
        }
        if self.pipe.inflight.is_empty() && !self.bufs.rbuf.is_empty() {
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
                if let Some(front) = self.pipe.inflight.pop_front() {
                    let id = front.req.id;
                    self.shared.emit(|w| w.end(id, trailers.as_ref()));
                    self.shared.forget(id);
                }
                ended = Some(End::Clean("closed after a close-delimited body"));
            }
            Ok(_) => {}
            Err(e) => {
                return End::Failed {
                    code: ErrorCode::from_decode(&e),
                    errno: "",
                    message: e.to_string(),
                };
            }
        }
        ended.unwrap_or_else(|| {
            if self.pipe.inflight.is_empty() {
                End::Clean("other side closed")
            } else {
                End::Failed {
                    code: ErrorCode::Socket,
                    errno: "",
                    message: "other side closed".into(),
                }
            }
        })
    }
}

/// A response that began before its request was sent (or with none waiting): the server is out of
/// step, or smuggling. The connection's fault, not the response's: an idempotent request is re-sent
/// on another one. undici's error for it, word for word (a SocketError).
fn unsolicited() -> End {
    End::Failed { code: ErrorCode::Socket, errno: "", message: "bad response".into() }
}
